/**
 * Redis-only behaviour: several servers sharing one Redis, and Redis going away and
 * coming back. The outage test stops a redis-server of its own, so other files keep theirs.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { sessionKey, type RevocationEvent } from '@portcullis/core';
import { findRedisServerBinary, startRedisServer, type RedisServer } from '../../../test/support/redis-server.js';
import { claimsOf, createHarness, redisTopologies, type RedisUnderTest, type SessionHarness } from './support/session-harness.js';

const redisUrl = inject('redisUrl');
const hasRedis = redisUrl !== null && findRedisServerBinary() !== undefined;
const label = (name: string) => (hasRedis ? name : `${name} — SKIPPED, redis-server not found`);

type Login = ReturnType<SessionHarness['issuer']['issueLoginPair']> & { readonly sub: string };

describe.skipIf(!hasRedis)(label('fleet on a shared Redis'), () => {
  for (const topology of redisTopologies()) describe(topology.name, () => fleetOnSharedRedis(topology));
});

function fleetOnSharedRedis({ env }: RedisUnderTest): void {
  let a: SessionHarness;
  let b: SessionHarness;

  beforeAll(async () => {
    a = await createHarness({ provider: 'redis', redisUrl, env, security: { session: { 'jwt-near-cache-seconds': 60 } } });
    b = await a.twin();
  });
  afterAll(async () => a.close());

  it('lets exactly one of 50 upgrades spread over two servers win', async () => {
    const jwt = a.issuer.issueLoginPair('fleet-1').accessToken;
    const results = await Promise.allSettled(Array.from({ length: 50 }, (_, i) => (i % 2 ? a : b).sessions.upgrade(jwt)));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect(await b.sessions.isJwtInvalidated(claimsOf(b, jwt))).toBe(true);
  });

  it('drops a session revoked on one server from the near cache of another, by its revocation event', async () => {
    const session = await a.sessions.upgrade(a.issuer.issueLoginPair('fleet-2').accessToken);
    expect(await b.sessions.validate(session.accessToken)).toMatchObject({ id: 'fleet-2' });
    expect(b.sessions.peek(session.accessToken)).toMatchObject({ id: 'fleet-2' });
    const seen: RevocationEvent[] = [];
    const off = b.sessions.onRevocation((event) => seen.push(event));

    await a.sessions.revoke(session.accessToken);
    await vi.waitFor(() => expect(b.sessions.peek(session.accessToken)).toBeUndefined(), { timeout: 5000, interval: 1 });
    off();

    expect(seen).toEqual([{ kind: 'revoked', sessionKeys: [sessionKey(session.accessToken)], jtis: [] }]);
    expect(await b.sessions.validate(session.accessToken)).toBeUndefined();
  });

  it('drops every near-cached session of a principal when another server revokes them all', async () => {
    const session = await b.sessions.upgrade(b.issuer.issueLoginPair('fleet-3').accessToken);
    await a.sessions.validate(session.accessToken);
    expect(a.sessions.peek(session.accessToken)).toBeDefined();
    expect(await b.sessions.revokeAllFor('fleet-3')).toBe(1);
    await vi.waitFor(() => expect(a.sessions.peek(session.accessToken)).toBeUndefined(), { timeout: 5000, interval: 1 });
  });

  it('asks Redis on every JWT check by default (jwt-near-cache-seconds 0)', async () => {
    const plain = await createHarness({ provider: 'redis', redisUrl, env });
    try {
      const claims = claimsOf(plain, plain.issuer.issueLoginPair('fleet-default').accessToken);
      expect(await plain.sessions.isJwtInvalidated(claims)).toBe(false);
      expect(plain.sessions.isJwtInvalidatedNow(claims)).toBeUndefined();
    } finally {
      await plain.close();
    }
  });

  it('neither near-caches nor answers a JWT verdict read while a revocation of it arrived', async () => {
    const login = a.issuer.issueLoginPair(`fleet-race-${randomUUID()}`);
    const claims = claimsOf(b, login.accessToken);
    const getMany = b.stores.cache.getMany.bind(b.stores.cache);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let markRead!: () => void;
    const read = new Promise<void>((resolve) => (markRead = resolve));
    vi.spyOn(b.stores.cache, 'getMany').mockImplementationOnce(async (refs) => {
      const values = await getMany(refs); // read before the revocation: "not invalidated"
      markRead();
      await gate;
      return values;
    });
    const arrived = new Promise<void>((resolve) => {
      const off = b.sessions.onRevocation(() => (off(), resolve()));
    });
    const check = b.sessions.isJwtInvalidated(claims);
    await read;
    await a.sessions.revoke(login.accessToken);
    await arrived;
    release();
    // The read predates the revocation that arrived meanwhile, so the check asks again.
    expect(await check).toBe(true);
    expect(b.sessions.isJwtInvalidatedNow(claims)).toBeUndefined();
    expect(await b.sessions.isJwtInvalidated(claims)).toBe(true);
    vi.restoreAllMocks();
  });

  it.each([
    ['upgraded', (login: Login) => a.sessions.upgrade(login.accessToken)],
    ['logged out with itself', (login: Login) => a.sessions.revoke(login.accessToken)],
    ['logged out with its refresh token (its family)', (login: Login) => a.sessions.revoke(login.refreshToken)],
    ['revoked with everything of its principal', (login: Login) => a.sessions.revokeAllFor(login.sub)],
  ])('near-caches a JWT found valid, and drops it once another server has it %s', async (_name, revoke) => {
    const sub = `fleet-jwt-${randomUUID()}`;
    const login = { ...a.issuer.issueLoginPair(sub), sub };
    const claims = claimsOf(b, login.accessToken);
    expect(b.sessions.isJwtInvalidatedNow(claims)).toBeUndefined();
    expect(await b.sessions.isJwtInvalidated(claims)).toBe(false);
    expect(b.sessions.isJwtInvalidatedNow(claims)).toBe(false);
    await revoke(login);
    await vi.waitFor(() => expect(b.sessions.isJwtInvalidatedNow(claims)).toBeUndefined(), { timeout: 5000, interval: 1 });
    expect(await b.sessions.isJwtInvalidated(claims)).toBe(true);
  });
}

describe.skipIf(!hasRedis)(label('Redis outage'), () => {
  let redis: RedisServer;
  let h: SessionHarness;
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);

  beforeAll(async () => {
    process.on('unhandledRejection', onUnhandled);
    redis = await startRedisServer();
    h = await createHarness({ provider: 'redis', redisUrl: redis.url, security: { session: { 'jwt-near-cache-seconds': 60 } } });
  });
  afterEach(() => expect(unhandled).toEqual([]));
  afterAll(async () => {
    process.off('unhandledRejection', onUnhandled);
    await h?.close();
    await redis?.stop();
  });

  it('fails closed with `unavailable` while Redis is down and recovers by itself', async () => {
    const session = await h.sessions.upgrade(h.issuer.issueLoginPair('outage').accessToken);
    expect(await h.sessions.validate(session.accessToken)).toBeDefined();
    expect(h.sessions.peek(session.accessToken)).toBeDefined();
    const jwt = claimsOf(h, h.issuer.issueLoginPair('outage-jwt').accessToken);
    expect(await h.sessions.isJwtInvalidated(jwt)).toBe(false);
    expect(h.sessions.isJwtInvalidatedNow(jwt)).toBe(false);

    await redis.stop();
    const unavailable = { code: 'unavailable' };
    // Losing the subscriber means events may be missed: nothing near-cached is trusted any more.
    await vi.waitFor(() => expect(h.sessions.peek(session.accessToken)).toBeUndefined(), { timeout: 5000, interval: 10 });
    expect(h.sessions.isJwtInvalidatedNow(jwt)).toBeUndefined();
    await expect(h.sessions.isJwtInvalidated(jwt)).rejects.toMatchObject(unavailable);
    await expect(h.sessions.validate(session.accessToken)).rejects.toMatchObject(unavailable);
    await expect(h.sessions.upgrade(h.issuer.issueLoginPair('outage').accessToken)).rejects.toMatchObject(unavailable);
    await expect(h.sessions.refresh(session.refreshToken)).rejects.toMatchObject(unavailable);
    await expect(h.sessions.revoke(session.accessToken)).rejects.toMatchObject(unavailable);
    await expect(h.lockout.claimAccountAttempt('outage')).rejects.toMatchObject(unavailable);
    await expect(h.lockout.isLocked('outage')).rejects.toMatchObject(unavailable);

    await redis.restart();
    await h.stores.ready(5000);
    const again = await h.sessions.upgrade(h.issuer.issueLoginPair('outage').accessToken);
    expect(await h.sessions.validate(again.accessToken)).toMatchObject({ id: 'outage' });
    expect(await h.lockout.isLocked('outage')).toMatchObject({ locked: false });
  });
});
