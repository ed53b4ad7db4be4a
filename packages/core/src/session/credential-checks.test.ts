import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Principal } from '../contracts/principal.js';
import { UdpKeyring } from '../key/udp-keyring.js';
import { silentLoggerFactory } from '../logging/logger.js';
import { MemoryCacheStore } from '../store/memory-cache-store.js';
import { CredentialChecks } from './credential-checks.js';
import { JwtInvalidation } from './jwt-invalidation.js';
import { SessionPairStore } from './session-pair-store.js';

const SESSIONS = 300;
const NEAR_CACHE_MS = 400;
const TICK_MS = 10;
const STORE_LATENCY_MS = 5;

const principal = (id: string): Principal => ({ id, name: undefined, roles: [], claims: {}, via: 'session' });

/**
 * A few hundred sessions sending a message every tick, with a near cache that lives
 * a few hundred milliseconds and a store that takes a few milliseconds to answer
 * (the real in-memory store behind a delay), on a frozen clock so every run is the same.
 */
describe('CredentialChecks: no near-cache expiry waves', () => {
  let cache: MemoryCacheStore;
  let checks: CredentialChecks;
  let tokens: string[];
  let pairs: SessionPairStore;
  /** Store reads (a batch is one), the sessions they read, and how many were in flight at once. */
  const reads = { started: 0, sessions: 0, inFlight: 0, maxInFlight: 0 };

  beforeEach(async () => {
    // A read an earlier test left in flight never ends (its timer was fake): count from zero.
    Object.assign(reads, { started: 0, sessions: 0, inFlight: 0, maxInFlight: 0 });
    vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'] });
    cache = new MemoryCacheStore(silentLoggerFactory.create('test'));
    pairs = new SessionPairStore(cache, { accessMs: 3_600_000, refreshMs: 86_400_000 }, new UdpKeyring(Buffer.alloc(32, 1)));
    const jwts = new JwtInvalidation(cache, 30_000, { familyMs: 86_400_000, principalMs: 86_400_000 });
    tokens = [];
    for (let i = 0; i < SESSIONS; i++) tokens.push((await pairs.create(principal(`p${i}`), undefined)).accessToken);
    const slowly = async <T>(sessions: number, read: () => Promise<T>): Promise<T> => {
      reads.started++;
      reads.sessions += sessions;
      reads.maxInFlight = Math.max(reads.maxInFlight, ++reads.inFlight);
      await new Promise((resolve) => setTimeout(resolve, STORE_LATENCY_MS));
      reads.inFlight--;
      return read();
    };
    const findAccess = pairs.findAccess.bind(pairs);
    const findAccessMany = pairs.findAccessMany.bind(pairs);
    vi.spyOn(pairs, 'findAccess').mockImplementation((token) => slowly(1, () => findAccess(token)));
    vi.spyOn(pairs, 'findAccessMany').mockImplementation((many) => slowly(many.length, () => findAccessMany(many)));
    checks = new CredentialChecks(pairs, jwts, { sessionMs: NEAR_CACHE_MS, jwtMs: 0 }, () => true);
  });

  afterEach(async () => {
    vi.useRealTimers();
    await cache.close();
  });

  /** One message per session, checked as `SessionAuth` does: the near cache, else the store. */
  function messageRound(): { readonly synchronous: number; readonly refused: Promise<number> } {
    let synchronous = 0;
    const misses: Promise<Principal | undefined>[] = [];
    for (const token of tokens) {
      if (checks.peek(token) !== undefined) synchronous++;
      else misses.push(checks.validate(token));
    }
    return { synchronous, refused: Promise.all(misses).then((answers) => answers.filter((p) => p === undefined).length) };
  }

  it('keeps the per-message check synchronous and never reads the store in a burst, past the first message', async () => {
    const warm = messageRound();
    await vi.advanceTimersByTimeAsync(STORE_LATENCY_MS * 2);
    expect(await warm.refused).toBe(0);
    Object.assign(reads, { started: 0, sessions: 0, maxInFlight: reads.inFlight });

    const rounds = 300; // 3 s: more than seven near-cache lifetimes
    let synchronous = 0;
    for (let round = 0; round < rounds; round++) {
      const answer = messageRound();
      synchronous += answer.synchronous;
      await vi.advanceTimersByTimeAsync(TICK_MS);
      expect(await answer.refused).toBe(0);
    }

    const messages = rounds * SESSIONS;
    expect(synchronous).toBe(messages);
    expect(reads.maxInFlight).toBeLessThanOrEqual(4);
    // About one session read per session per lifetime, not one per message...
    const lifetimes = (rounds * TICK_MS) / (NEAR_CACHE_MS * 0.5);
    expect(reads.sessions).toBeLessThanOrEqual(SESSIONS * (lifetimes + 1));
    expect(reads.sessions).toBeLessThan(messages / 20);
    // ...gathered into store reads of many sessions each, not one round trip per session.
    expect(reads.started).toBeLessThan(reads.sessions / 8);
  });

  it('sends every waiting renewal when its timer fires, not one read per firing', async () => {
    // A server far behind fires a timer once per long loop turn: one read of 64 sessions per
    // firing could not renew 1,000 sessions before their entries end.
    for (let i = SESSIONS; i < 1100; i++) tokens.push((await pairs.create(principal(`p${i}`), undefined)).accessToken);
    const warm = messageRound();
    await vi.advanceTimersByTimeAsync(STORE_LATENCY_MS * 2);
    expect(await warm.refused).toBe(0);
    // Entries live 80–100 % of the TTL and are renewed in its last 30 %: at 75 % every one is due.
    vi.setSystemTime(Date.now() + NEAR_CACHE_MS * 0.75 - STORE_LATENCY_MS * 2);
    expect(reads.inFlight).toBe(0);
    Object.assign(reads, { started: 0, sessions: 0, maxInFlight: 0 });
    expect(messageRound().synchronous).toBe(1100);
    await vi.advanceTimersByTimeAsync(20); // the renewal timer fires once
    expect(reads.started).toBe(16); // 1,024 of the 1,100 sessions, 64 to a read: as many reads as may be in flight
    expect(reads.maxInFlight).toBe(16);
    await vi.advanceTimersByTimeAsync(STORE_LATENCY_MS + 20); // a read is answered; the rest go at the next firing
    expect(reads.sessions).toBe(1100);
    expect(reads.maxInFlight).toBe(16);
  });

  it('still drops a session the store no longer has, at its renewal, without a revocation event', async () => {
    const warm = messageRound();
    await vi.advanceTimersByTimeAsync(STORE_LATENCY_MS * 2);
    expect(await warm.refused).toBe(0);
    // Deleted in the store, with no event announcing it (as when another process's publish failed).
    await pairs.revokeByAccess(tokens[0]!);
    let seen: Principal | undefined = principal('x');
    for (let t = 0; t < NEAR_CACHE_MS && seen !== undefined; t += TICK_MS) {
      seen = checks.peek(tokens[0]!);
      await vi.advanceTimersByTimeAsync(TICK_MS);
    }
    expect(seen).toBeUndefined();
  });
});
