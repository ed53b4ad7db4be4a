/**
 * What each store operation costs on the wire, counted on a real redis-server of this file's
 * own with MONITOR: every request a client sends shows up once, and the commands a script runs
 * inside Redis show up marked `lua`, so they are not requests. An upgrade and a session
 * revocation are one request (their revocation event published by the script); a session
 * refresh (a connection's too, which names its principal as the owner) is one request answered
 * before the caller goes on, plus its revocation event, sent behind it and not waited for. A `@RateLimit` claim or a lockout count is one request, and keeps
 * its window semantics.
 */
import { createClient } from '@keyv/redis';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { silentLoggerFactory } from '@portcullis/core';
import type { RevocationEvent } from '@portcullis/core';
import { RedisCacheStore } from '../src/store/redis-cache-store.js';
import { findRedisServerBinary, startRedisServer, type RedisServer } from '../../../test/support/redis-server.js';
import { claimsOf, createHarness, type SessionHarness } from './support/session-harness.js';

const redisUrl = inject('redisUrl');
const binary = findRedisServerBinary();

/** Watches every request to a Redis; `requestsDuring` answers those `action` sent. */
async function watch(url: string): Promise<{ requestsDuring(action: () => Promise<unknown>): Promise<string[]>; close(): Promise<void> }> {
  const monitor = createClient({ url });
  const probe = createClient({ url });
  await Promise.all([monitor.connect(), probe.connect()]);
  let lines: string[] = [];
  await monitor.monitor((line: string) => void lines.push(line));
  let marks = 0;
  const drain = async (): Promise<void> => {
    const mark = `mark-${++marks}`;
    await probe.echo(mark);
    for (let i = 0; i < 200 && !lines.some((l) => l.includes(mark)); i++) await new Promise((r) => setTimeout(r, 5));
  };
  return {
    async requestsDuring(action) {
      await drain();
      lines = [];
      await action();
      await drain();
      return lines.filter((l) => !l.includes(' lua]') && !/"echo" "mark-/i.test(l)).map((l) => l.replace(/^[\d.]+ \[[^\]]*\] /, '').toLowerCase());
    },
    async close() {
      await Promise.all([monitor.close(), probe.close()]);
    },
  };
}

describe.runIf(redisUrl !== null && binary !== undefined)('Redis requests per store operation', () => {
  let redis: RedisServer;
  let cache: RedisCacheStore;
  let wire: Awaited<ReturnType<typeof watch>>;
  beforeAll(async () => {
    redis = await startRedisServer(binary);
    cache = new RedisCacheStore({ url: redis.url, keyPrefix: 'trips' }, silentLoggerFactory.create('test'));
    await cache.ready();
    wire = await watch(redis.url);
  });
  afterAll(async () => {
    await wire?.close();
    await cache?.close();
    await redis?.stop();
  });

  it('counts a rate-limit claim or a failed login with one request, which starts the window only for a new counter', async () => {
    await cache.increment('rate-limit', 'warm-up', 60_000); // the first call may have to send the script in full
    const first = await wire.requestsDuring(() => cache.increment('rate-limit', 'caller-1', 60_000));
    expect(first).toHaveLength(1);
    expect(first[0]).toMatch(/^"evalsha"/);
    expect((await cache.counter('rate-limit', 'caller-1')).count).toBe(1);
    const started = await cache.remainingMs('rate-limit', 'caller-1');
    expect(started).toBeGreaterThan(59_000);
    expect(started).toBeLessThanOrEqual(60_000);

    await new Promise((r) => setTimeout(r, 50));
    const again = await wire.requestsDuring(() => cache.increment('rate-limit', 'caller-1', 60_000, 4));
    expect(again).toHaveLength(1);
    expect((await cache.counter('rate-limit', 'caller-1')).count).toBe(5);
    // An existing counter keeps its window: the second claim did not restart it.
    expect(await cache.remainingMs('rate-limit', 'caller-1')).toBeLessThan(started);
    expect(await cache.increment('rate-limit', 'caller-1', 60_000, -5)).toBe(0);
    expect(await cache.remainingMs('rate-limit', 'caller-1')).toBeGreaterThan(0);
  });

  it('sends the script in full once when Redis has forgotten it, and counts correctly', async () => {
    const admin = createClient({ url: redis.url });
    await admin.connect();
    try {
      await admin.scriptFlush();
    } finally {
      await admin.close();
    }
    const requests = await wire.requestsDuring(() => cache.increment('rate-limit', 'after-flush', 1_000));
    expect(requests.map((r) => r.split(' ')[0])).toEqual(['"evalsha"', '"eval"']);
    expect(await cache.increment('rate-limit', 'after-flush', 1_000)).toBe(2);
    expect(await cache.remainingMs('rate-limit', 'after-flush')).toBeLessThanOrEqual(1_000);
  });

  it('lets a counter expire at the end of its window', async () => {
    expect(await cache.increment('lockout-failures', 'short', 100)).toBe(1);
    await new Promise((r) => setTimeout(r, 150));
    expect(await cache.counter('lockout-failures', 'short')).toEqual({ count: 0, remainingMs: 0 });
    expect(await cache.increment('lockout-failures', 'short', 100)).toBe(1);
  });
});

describe.runIf(redisUrl !== null && binary !== undefined)('Redis requests per session operation (single server)', () => {
  let redis: RedisServer;
  let a: SessionHarness;
  let b: SessionHarness;
  let wire: Awaited<ReturnType<typeof watch>>;
  const verbs = (requests: string[]) => requests.map((r) => r.split(' ')[0]!.replaceAll('"', ''));
  beforeAll(async () => {
    redis = await startRedisServer(binary);
    a = await createHarness({ provider: 'redis', redisUrl: redis.url });
    b = await a.twin();
    // The first use of each script may send it in full; count from the second on.
    const warm = await a.sessions.upgrade(a.issuer.issueLoginPair('warm-up').accessToken);
    await a.sessions.refresh(warm.refreshToken);
    await a.sessions.revoke(warm.refreshToken);
    wire = await watch(redis.url);
  });
  afterAll(async () => {
    await wire?.close();
    await a?.close();
    await redis?.stop();
  });

  it('upgrades a JWT with one request, spends the JWT exactly once and tells the other server', async () => {
    const login = a.issuer.issueLoginPair('one-trip');
    await a.sessions.recordLogin('one-trip', claimsOf(a, login.accessToken).fam!);
    const seen: RevocationEvent[] = [];
    const off = b.sessions.onRevocation((event) => seen.push(event));
    let session!: Awaited<ReturnType<typeof a.sessions.upgrade>>;
    const requests = await wire.requestsDuring(async () => (session = await a.sessions.upgrade(login.accessToken)));
    expect(verbs(requests)).toEqual(['evalsha']);
    expect(await b.sessions.validate(session.accessToken)).toMatchObject({ id: 'one-trip' });
    await vi.waitFor(() => expect(seen).toContainEqual({ kind: 'revoked', sessionKeys: [], jtis: [claimsOf(a, login.accessToken).jti] }), { timeout: 5000, interval: 5 });
    off();
    const again = await Promise.allSettled([a.sessions.upgrade(login.accessToken), b.sessions.upgrade(login.accessToken)]);
    expect(again.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    const caller = await a.sessions.loginCaller(session.accessToken);
    expect((await a.sessions.listLogins(caller!)).map((l) => l.upgraded)).toEqual([true]);
  });

  it('of concurrent upgrades of one JWT on two servers, exactly one wins', async () => {
    for (let i = 0; i < 20; i++) {
      const jwt = a.issuer.issueLoginPair(`race-${i}`).accessToken;
      const results = await Promise.allSettled([a.sessions.upgrade(jwt), b.sessions.upgrade(jwt), a.sessions.upgrade(jwt), b.sessions.upgrade(jwt)]);
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    }
  });

  it('refreshes a session with one request the caller waits for, its event sent behind it; of concurrent refreshes exactly one rotates', async () => {
    const first = await a.sessions.upgrade(a.issuer.issueLoginPair('rotating').accessToken);
    await b.sessions.validate(first.accessToken);
    let next!: Awaited<ReturnType<typeof a.sessions.refresh>>;
    const requests = await wire.requestsDuring(async () => (next = await a.sessions.refresh(first.refreshToken)));
    expect(verbs(requests)).toEqual(['evalsha', 'publish']);
    expect(next.kind).toBe('session');
    const session = next.kind === 'session' ? next.session : undefined;
    expect(session?.principal).toMatchObject({ id: 'rotating' });
    expect(await b.sessions.validate(session!.accessToken)).toMatchObject({ id: 'rotating' });
    await vi.waitFor(async () => expect(await b.sessions.validate(first.accessToken)).toBeUndefined(), { timeout: 5000, interval: 5 });

    const racers = await Promise.allSettled([a.sessions.refresh(session!.refreshToken), b.sessions.refresh(session!.refreshToken), a.sessions.refresh(session!.refreshToken)]);
    expect(racers.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
  });

  it('refreshes a connection\'s session, its principal named as the owner, with the same one request; another principal\'s token changes nothing', async () => {
    const first = await a.sessions.upgrade(a.issuer.issueLoginPair('owner').accessToken);
    let refused: unknown;
    const foreign = await wire.requestsDuring(async () => (refused = await a.sessions.refresh(first.refreshToken, 'mallory').catch((error: unknown) => error)));
    expect(refused).toMatchObject({ code: 'forbidden' });
    expect(verbs(foreign)).toEqual(['evalsha']);
    expect(await b.sessions.validate(first.accessToken)).toMatchObject({ id: 'owner' });

    let next!: Awaited<ReturnType<typeof a.sessions.refresh>>;
    const own = await wire.requestsDuring(async () => (next = await a.sessions.refresh(first.refreshToken, 'owner')));
    expect(verbs(own)).toEqual(['evalsha', 'publish']);
    expect(next).toMatchObject({ kind: 'session', session: { principal: { id: 'owner' } } });
  });

  it('revokes a session with one request, by either token, exactly once, and tells the other server', async () => {
    const session = await a.sessions.upgrade(a.issuer.issueLoginPair('leaving').accessToken);
    await b.sessions.validate(session.accessToken);
    expect(b.sessions.peek(session.accessToken)).toBeDefined();
    let revoked = false;
    const requests = await wire.requestsDuring(async () => (revoked = await a.sessions.revoke(session.accessToken)));
    expect(verbs(requests)).toEqual(['evalsha']);
    expect(revoked).toBe(true);
    await vi.waitFor(() => expect(b.sessions.peek(session.accessToken)).toBeUndefined(), { timeout: 5000, interval: 5 });
    expect(await b.sessions.validate(session.accessToken)).toBeUndefined();
    expect(await a.sessions.refresh(session.refreshToken).catch((e: { reason?: string }) => e.reason)).toBe('revoked');
    expect(await Promise.all([a.sessions.revoke(session.refreshToken), b.sessions.revoke(session.accessToken)])).toEqual([false, false]);

    const other = await a.sessions.upgrade(a.issuer.issueLoginPair('leaving-2').accessToken);
    expect(await b.sessions.revoke(other.refreshToken)).toBe(true);
    expect(await a.sessions.validate(other.accessToken)).toBeUndefined();
  });
});
