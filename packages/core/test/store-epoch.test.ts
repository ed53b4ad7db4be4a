/**
 * The store epoch: revocations of JWTs live in the store, so when its data is lost
 * (a process restart in memory, a Redis restarted empty or flushed) every JWT issued
 * before is refused instead of trusted again; a fleet sharing one Redis shares one
 * epoch, so a server joining does not void anyone's tokens.
 */
import { afterEach, describe, expect, inject, it, vi } from 'vitest';
import { createClient } from '@keyv/redis';
import { findRedisServerBinary } from '../../../test/support/redis-server.js';
import { claimsOf, createHarness, type SessionHarness } from './support/session-harness.js';

const redisUrl = inject('redisUrl');
const hasRedis = redisUrl !== null && findRedisServerBinary() !== undefined;
const harnesses: SessionHarness[] = [];
const open = async (...args: Parameters<typeof createHarness>) => {
  const harness = await createHarness(...args);
  harnesses.push(harness);
  return harness;
};

afterEach(async () => {
  vi.useRealTimers();
  await Promise.all(harnesses.splice(0).map((h) => h.close()));
});

describe('store epoch, in memory', () => {
  it('refuses JWTs issued before the store began, for every shield and for upgrade', async () => {
    vi.useFakeTimers({ toFake: ['Date'], now: new Date('2031-05-01T10:00:00Z') });
    const earlier = await open({ provider: 'inmemory' });
    const old = earlier.issuer.issueLoginPair('restarted').accessToken;
    vi.setSystemTime(new Date('2031-05-01T10:00:05Z'));
    const later = await open({ provider: 'inmemory' });

    expect(await later.sessions.isJwtInvalidated(claimsOf(later, old))).toBe(true);
    await expect(later.sessions.upgrade(old)).rejects.toMatchObject({ reason: 'revoked' });
    const current = later.issuer.issueLoginPair('restarted').accessToken;
    expect(await later.sessions.isJwtInvalidated(claimsOf(later, current))).toBe(false);
    expect(await later.sessions.upgrade(current)).toMatchObject({ accessToken: expect.stringMatching(/;session$/) });
  });
});

describe.skipIf(!hasRedis)(`store epoch, on Redis${hasRedis ? '' : ' — SKIPPED, redis-server not found'}`, () => {
  it('is shared by a fleet: a server joining later keeps earlier JWTs valid', async () => {
    const first = await open({ provider: 'redis', redisUrl });
    const jwt = first.issuer.issueLoginPair('fleet').accessToken;
    await new Promise((resolve) => setTimeout(resolve, 1010 - (Date.now() % 1000)));
    const joined = await first.twin();
    expect(await joined.sessions.isJwtInvalidated(claimsOf(joined, jwt))).toBe(false);
  });

  it('starts a new epoch when the data is gone, refusing every JWT issued before, even a logged-out one', async () => {
    const keyPrefix = `epoch-${Date.now()}`;
    const h = await open({ provider: 'redis', redisUrl }, keyPrefix);
    const loggedOut = h.issuer.issueLoginPair('flushed').accessToken;
    const kept = h.issuer.issueLoginPair('flushed').accessToken;
    await h.sessions.revoke(loggedOut);
    expect(await h.sessions.isJwtInvalidated(claimsOf(h, kept))).toBe(false);

    await new Promise((resolve) => setTimeout(resolve, 1010 - (Date.now() % 1000)));
    const admin = createClient({ url: redisUrl! });
    await admin.connect();
    const keys = await admin.keys(`${keyPrefix}:*`);
    expect(keys).toContain(`${keyPrefix}:store-epoch:`);
    await admin.del(keys); // what a FLUSHALL or an empty restart does to this prefix
    await admin.close();

    expect(await h.sessions.isJwtInvalidated(claimsOf(h, loggedOut))).toBe(true);
    expect(await h.sessions.isJwtInvalidated(claimsOf(h, kept))).toBe(true);
    await expect(h.sessions.upgrade(kept)).rejects.toMatchObject({ reason: 'revoked' });
    const fresh = h.issuer.issueLoginPair('flushed').accessToken;
    expect(await h.sessions.isJwtInvalidated(claimsOf(h, fresh))).toBe(false);
  });
});
