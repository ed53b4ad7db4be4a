import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Principal } from '../contracts/principal.js';
import { UdpKeyring, udpSessionId } from '../key/udp-keyring.js';
import { silentLoggerFactory } from '../logging/logger.js';
import { MemoryCacheStore } from '../store/memory-cache-store.js';
import { CredentialChecks } from './credential-checks.js';
import { JwtInvalidation } from './jwt-invalidation.js';
import { SessionNearCache } from './session-near-cache.js';
import { SessionPairStore } from './session-pair-store.js';
import { sessionKey } from './session-token.js';

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
    const findAccessBySid = pairs.findAccessBySid.bind(pairs);
    const findAccessBySidMany = pairs.findAccessBySidMany.bind(pairs);
    vi.spyOn(pairs, 'findAccessBySid').mockImplementation((sid) => slowly(1, () => findAccessBySid(sid)));
    vi.spyOn(pairs, 'findAccessBySidMany').mockImplementation((many) => slowly(many.length, () => findAccessBySidMany(many)));
    checks = new CredentialChecks(pairs, jwts, { sessionMs: NEAR_CACHE_MS, jwtMs: 0 }, () => true);
  });

  afterEach(async () => {
    vi.useRealTimers();
    await cache.close();
  });

  type Round = () => { readonly synchronous: number; readonly refused: Promise<number> };

  /** One message per key, checked as the shields do: the near cache (`peek`), else the store (`validate`). */
  function roundOf(keys: readonly string[], peek: (key: string) => Principal | undefined, validate: (key: string) => Promise<Principal | undefined>): Round {
    return () => {
      let synchronous = 0;
      const misses: Promise<Principal | undefined>[] = [];
      for (const key of keys) {
        if (peek(key) !== undefined) synchronous++;
        else misses.push(validate(key));
      }
      return { synchronous, refused: Promise.all(misses).then((answers) => answers.filter((p) => p === undefined).length) };
    };
  }

  /** One message per session by its token, as `SessionAuth` checks it. */
  const messageRound: Round = () => roundOf(tokens, (t) => checks.peek(t), (t) => checks.validate(t))();

  /**
   * Warms every session, then sends a message per session every tick for 3 s (more than seven
   * near-cache lifetimes): every one answered from the near cache, and the store read in
   * gathered renewals, a few at a time, never once per message.
   */
  async function expectNoExpiryWaves(round: Round): Promise<void> {
    const warm = round();
    await vi.advanceTimersByTimeAsync(STORE_LATENCY_MS * 2);
    expect(await warm.refused).toBe(0);
    Object.assign(reads, { started: 0, sessions: 0, maxInFlight: reads.inFlight });

    const rounds = 300;
    let synchronous = 0;
    for (let i = 0; i < rounds; i++) {
      const answer = round();
      synchronous += answer.synchronous;
      await vi.advanceTimersByTimeAsync(TICK_MS);
      expect(await answer.refused).toBe(0);
    }

    const messages = rounds * SESSIONS;
    expect(synchronous).toBe(messages);
    expect(reads.maxInFlight).toBeLessThanOrEqual(4);
    // At most one session read per session per renewal (one per 30–50 % of a lifetime), not one per message...
    const renewals = (rounds * TICK_MS) / (NEAR_CACHE_MS * 0.3);
    expect(reads.sessions).toBeLessThanOrEqual(SESSIONS * (renewals + 1));
    expect(reads.sessions).toBeLessThan(messages / 10);
    // ...gathered into store reads of many sessions each, not one round trip per session.
    expect(reads.started).toBeLessThan(reads.sessions / 8);
  }

  /**
   * Deletes the first session in the store with no event announcing it (as when another
   * process's publish failed), reads it (by `keys[0]`) and the second every tick: the first is
   * dropped by its renewal, rather than left to end on its own, and the second stays.
   */
  async function expectDroppedAtRenewal(keys: readonly string[], peek: (key: string) => Principal | undefined): Promise<void> {
    const dropped = vi.spyOn(SessionNearCache.prototype, 'drop');
    await pairs.revokeByAccess(tokens[0]!);
    let seen: Principal | undefined = principal('x');
    for (let t = 0; t < NEAR_CACHE_MS && seen !== undefined; t += TICK_MS) {
      seen = peek(keys[0]!);
      peek(keys[1]!);
      await vi.advanceTimersByTimeAsync(TICK_MS);
    }
    expect(seen).toBeUndefined();
    expect(dropped).toHaveBeenCalledWith(keys[0]);
    dropped.mockRestore();
    expect(peek(keys[1]!)).toMatchObject({ id: 'p1' });
  }

  it('keeps the per-message check synchronous and never reads the store in a burst, past the first message', async () => {
    await expectNoExpiryWaves(messageRound);
  });

  it('does the same for sessions named by their UDP sid, as authenticated datagrams name them', async () => {
    const sids = tokens.map((token) => udpSessionId(token).toString('hex'));
    await expectNoExpiryWaves(roundOf(sids, (sid) => checks.peekSid(sid), (sid) => checks.validateSid(sid)));

    await expectDroppedAtRenewal(sids, (sid) => checks.peekSid(sid));
  });

  it('sends each full batch of renewals as it fills and the rest when the timer fires, not one read per firing', async () => {
    // A server far behind fires a timer once per long loop turn: one read per firing could not
    // renew thousands of sessions before their entries end.
    for (let i = SESSIONS; i < 4400; i++) tokens.push((await pairs.create(principal(`p${i}`), undefined)).accessToken);
    const warm = messageRound();
    await vi.advanceTimersByTimeAsync(STORE_LATENCY_MS * 2);
    expect(await warm.refused).toBe(0);
    // Entries live 80–100 % of the TTL and are renewed in its second half: at 75 % every one is due.
    vi.setSystemTime(Date.now() + NEAR_CACHE_MS * 0.75 - STORE_LATENCY_MS * 2);
    expect(reads.inFlight).toBe(0);
    Object.assign(reads, { started: 0, sessions: 0, maxInFlight: 0 });
    expect(messageRound().synchronous).toBe(4400);
    // 17 full batches of 256 went as they filled, before any timer (which a long loop turn holds back).
    expect(reads.started).toBe(17);
    expect(reads.sessions).toBe(17 * 256);
    expect(reads.inFlight).toBe(17);
    await vi.advanceTimersByTimeAsync(20); // the renewal timer fires once
    expect(reads.started).toBe(18); // all 4,400 sessions, 256 to a read: the last 48 in one firing
    expect(reads.sessions).toBe(4400);
    await vi.advanceTimersByTimeAsync(STORE_LATENCY_MS + 20);
    expect(reads.started).toBe(18); // nothing was left for a later firing
  });

  it('keeps the principal it holds through every renewal, so renewals leave nothing behind that lives on', async () => {
    // Redis hands back each record parsed anew; a renewal that kept the new copy would move
    // every session's principal into the old generation once per near-cache lifetime.
    const readMany = vi.mocked(pairs.findAccessMany).getMockImplementation()!;
    vi.mocked(pairs.findAccessMany).mockImplementation(async (many) => (await readMany(many)).map((record) => record && structuredClone(record)));
    const warm = messageRound();
    await vi.advanceTimersByTimeAsync(STORE_LATENCY_MS * 2);
    expect(await warm.refused).toBe(0);
    const held = tokens.map((token) => checks.peek(token));
    Object.assign(reads, { started: 0, sessions: 0, maxInFlight: reads.inFlight });
    for (let t = 0; t < NEAR_CACHE_MS * 3; t += TICK_MS) {
      expect(messageRound().synchronous).toBe(SESSIONS);
      await vi.advanceTimersByTimeAsync(TICK_MS);
    }
    expect(reads.sessions).toBeGreaterThanOrEqual(SESSIONS * 3); // every session renewed, each more than once
    expect(tokens.filter((token, i) => checks.peek(token) !== held[i])).toEqual([]);
  });

  it('still drops a session the store no longer has, at its renewal, without a revocation event', async () => {
    const warm = messageRound();
    await vi.advanceTimersByTimeAsync(STORE_LATENCY_MS * 2);
    expect(await warm.refused).toBe(0);
    await expectDroppedAtRenewal(tokens, (token) => checks.peek(token));
  });

  describe('a revocation that arrives while sessions are read', () => {
    /** Warms every session, then lets the renewal timer send their reads, which are now in flight. */
    async function renewalsInFlight(): Promise<void> {
      const warm = messageRound();
      await vi.advanceTimersByTimeAsync(STORE_LATENCY_MS * 2);
      expect(await warm.refused).toBe(0);
      // Entries live 80–100 % of the TTL and are renewed in its second half: at 75 % every one is due.
      vi.setSystemTime(Date.now() + NEAR_CACHE_MS * 0.75 - STORE_LATENCY_MS * 2);
      Object.assign(reads, { started: 0, sessions: 0, maxInFlight: 0 });
      expect(messageRound().synchronous).toBe(SESSIONS);
      await vi.advanceTimersByTimeAsync(20); // the renewal timer fires: every session is being read
      expect(reads.sessions).toBe(SESSIONS);
      expect(reads.inFlight).toBeGreaterThan(0);
    }

    /** After the reads are answered, past the end of every entry they did not renew: the sessions still served without a store read. */
    async function servedAfterTheOldEntriesEnd(): Promise<Set<number>> {
      await vi.advanceTimersByTimeAsync(STORE_LATENCY_MS);
      expect(reads.inFlight).toBe(0);
      vi.setSystemTime(Date.now() + NEAR_CACHE_MS * 0.25 + TICK_MS);
      const served = new Set<number>();
      tokens.forEach((token, i) => checks.peek(token) !== undefined && served.add(i));
      return served;
    }

    it("keeps the renewals of every other session (a player's logout does not empty the near cache)", async () => {
      await renewalsInFlight();
      await pairs.revokeByAccess(tokens[7]!);
      checks.forget({ kind: 'revoked', sessionKeys: [sessionKey(tokens[7]!)], jtis: [] });
      const served = await servedAfterTheOldEntriesEnd();
      expect(served.has(7)).toBe(false);
      expect(served.size).toBe(SESSIONS - 1);
    });

    it('keeps nothing a read answered for the session the revocation names, even when the store answered as before it', async () => {
      await renewalsInFlight();
      // The store still holds the session: the read was served before the revocation reached it.
      checks.forget({ kind: 'revoked', sessionKeys: [sessionKey(tokens[3]!)], jtis: [] });
      const served = await servedAfterTheOldEntriesEnd();
      expect(served.has(3)).toBe(false);
      expect(served.size).toBe(SESSIONS - 1);
    });

    it('keeps nothing for any session of a principal revoked meanwhile', async () => {
      await renewalsInFlight();
      checks.forget({ kind: 'revoked', sessionKeys: [], jtis: [], principalId: 'p5' });
      const served = await servedAfterTheOldEntriesEnd();
      expect(served.has(5)).toBe(false);
      expect(served.size).toBe(SESSIONS - 1);
    });

    it('keeps nothing at all after a gap (events may have been missed)', async () => {
      await renewalsInFlight();
      checks.forget({ kind: 'gap' });
      expect((await servedAfterTheOldEntriesEnd()).size).toBe(0);
    });

    it('admits a session read once when another session was revoked meanwhile, and reads again when its own or its principal was', async () => {
      const [mine, other] = [tokens[0]!, tokens[1]!];
      const first = checks.validate(mine);
      checks.forget({ kind: 'revoked', sessionKeys: [sessionKey(other)], jtis: [] });
      await vi.advanceTimersByTimeAsync(STORE_LATENCY_MS);
      expect((await first)?.id).toBe('p0');
      expect(reads.started).toBe(1);
      expect(checks.peek(mine)?.id).toBe('p0');

      // Its own revocation, announced before the store has it: the read may predate it, so it is asked again, and not kept.
      const stale = tokens[4]!;
      const reading = checks.validate(stale);
      checks.forget({ kind: 'revoked', sessionKeys: [sessionKey(stale)], jtis: [] });
      await vi.advanceTimersByTimeAsync(STORE_LATENCY_MS * 2);
      expect((await reading)?.id).toBe('p4'); // the store, asked again, still holds it
      expect(reads.started).toBe(3);
      expect(checks.peek(stale)).toBeUndefined();

      // Its principal's revocation, likewise.
      const banned = tokens[6]!;
      const read = checks.validate(banned);
      checks.forget({ kind: 'revoked', sessionKeys: [], jtis: [], principalId: 'p6' });
      await vi.advanceTimersByTimeAsync(STORE_LATENCY_MS * 2);
      expect((await read)?.id).toBe('p6');
      expect(reads.started).toBe(5);
      expect(checks.peek(banned)).toBeUndefined();
    });
  });
});

