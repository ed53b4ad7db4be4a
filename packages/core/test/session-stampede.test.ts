/**
 * Concurrent validations of one session token share one store read (single
 * flight), so a wave of messages arriving just after a near-cache entry expired
 * costs one lookup, not one per message; and a revocation in the middle of a read
 * is never hidden from callers that arrive after it.
 */
import { afterEach, describe, expect, inject, it, vi } from 'vitest';
import { findRedisServerBinary } from '../../../test/support/redis-server.js';
import { createHarness, type ProviderName, type SessionHarness } from './support/session-harness.js';

const redisUrl = inject('redisUrl');
const hasRedis = redisUrl !== null && findRedisServerBinary() !== undefined;
const providers: ProviderName[] = hasRedis ? ['inmemory', 'redis'] : ['inmemory'];
let h: SessionHarness | undefined;

afterEach(async () => {
  vi.restoreAllMocks();
  await h?.close();
  h = undefined;
});

describe.each(providers)('session validation under a stampede (%s)', (provider) => {
  it('answers 200 concurrent validations of one token with one store read', async () => {
    h = await createHarness({ provider, redisUrl, security: { session: { 'near-cache-seconds': 0 } } });
    const session = await h.sessions.upgrade(h.issuer.issueLoginPair('stampede').accessToken);
    const reads = vi.spyOn(h.stores.cache, 'get');
    const principals = await Promise.all(Array.from({ length: 200 }, () => h!.sessions.validate(session.accessToken)));
    expect(principals.every((p) => p?.id === 'stampede')).toBe(true);
    expect(reads).toHaveBeenCalledTimes(1);
    await h.sessions.validate(session.accessToken);
    expect(reads).toHaveBeenCalledTimes(2); // nothing is kept once the read is answered (near cache off)
  });

  it('does not hand a read that began before a revocation to callers arriving after it', async () => {
    h = await createHarness({ provider, redisUrl, security: { session: { 'near-cache-seconds': 0 } } });
    const session = await h.sessions.upgrade(h.issuer.issueLoginPair('racer').accessToken);
    const early = h.sessions.validate(session.accessToken);
    await h.sessions.revoke(session.accessToken);
    const late = h.sessions.validate(session.accessToken);
    await early;
    expect(await late).toBeUndefined();
  });
});
