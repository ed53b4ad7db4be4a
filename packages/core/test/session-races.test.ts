/**
 * A revocation that runs while a new session pair is being written must not miss
 * it: an upgrade or a session refresh racing a logout of its login family, or a
 * revokeAllFor of its principal, ends with no live session. Each test holds the
 * pair's write open (a real store, delayed) while the revocation runs.
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

/**
 * Holds the store's next `method` call until `release()`: a write is made only then
 * (`delay: 'call'`), a read is made at once and answered only then (`delay: 'answer'`).
 * `started` resolves once the call was asked for.
 */
function holdNext(harness: SessionHarness, method: 'write' | 'get', delay: 'call' | 'answer') {
  const cache = harness.stores.cache;
  const original = (cache[method] as (...args: unknown[]) => Promise<unknown>).bind(cache);
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let markStarted!: () => void;
  const started = new Promise<void>((resolve) => (markStarted = resolve));
  vi.spyOn(cache, method).mockImplementationOnce((async (...args: unknown[]) => {
    const early = delay === 'answer' ? original(...args) : undefined;
    if (early) await early;
    markStarted();
    await gate;
    return early ?? original(...args);
  }) as never);
  return { started, release };
}

const holdNextWrite = (harness: SessionHarness) => holdNext(harness, 'write', 'call');

describe.each(providers)('revocations racing new session pairs (%s)', (provider) => {
  it('an upgrade racing a logout of its login family is refused and leaves no session', async () => {
    h = await createHarness({ provider, redisUrl });
    const login = h.issuer.issueLoginPair('racer');
    const held = holdNextWrite(h);
    const upgrading = h.sessions.upgrade(login.accessToken);
    await held.started;
    expect(await h.sessions.revoke(login.refreshToken)).toBe(true);
    held.release();
    await expect(upgrading).rejects.toMatchObject({ reason: 'revoked' });
    expect(await h.sessions.revokeAllFor('racer')).toBe(0);
  });

  it('an upgrade racing revokeAllFor of its principal is refused and leaves no session', async () => {
    h = await createHarness({ provider, redisUrl });
    const login = h.issuer.issueLoginPair('racer');
    const held = holdNextWrite(h);
    const upgrading = h.sessions.upgrade(login.accessToken);
    await held.started;
    await h.sessions.revokeAllFor('racer');
    held.release();
    await expect(upgrading).rejects.toMatchObject({ reason: 'revoked' });
    expect(await h.sessions.revokeAllFor('racer')).toBe(0);
  });

  it('a session refresh racing a logout of its login family is refused and leaves no session', async () => {
    h = await createHarness({ provider, redisUrl });
    const login = h.issuer.issueLoginPair('racer');
    const session = await h.sessions.upgrade(login.accessToken);
    const held = holdNextWrite(h);
    const refreshing = h.sessions.refresh(session.refreshToken);
    await held.started;
    await h.sessions.revoke(login.refreshToken);
    held.release();
    await expect(refreshing).rejects.toMatchObject({ reason: 'revoked' });
    expect(await h.sessions.revokeAllFor('racer')).toBe(0);
  });

  it('an upgrade whose store write fails can be tried again with the same JWT', async () => {
    h = await createHarness({ provider, redisUrl });
    const login = h.issuer.issueLoginPair('retry');
    vi.spyOn(h.stores.cache, 'write').mockRejectedValueOnce(new Error('write lost'));
    await expect(h.sessions.upgrade(login.accessToken)).rejects.toThrow('write lost');
    expect(await h.sessions.validate((await h.sessions.upgrade(login.accessToken)).accessToken)).toMatchObject({ id: 'retry' });
  });

  it('does not near-cache a session revoked while its lookup was in flight, yet an unrelated upgrade does not stop caching', async () => {
    h = await createHarness({ provider, redisUrl });
    const doomed = await h.sessions.upgrade(h.issuer.issueLoginPair('doomed').accessToken);
    let held = holdNext(h, 'get', 'answer');
    const lookup = h.sessions.validate(doomed.accessToken);
    await held.started;
    await h.sessions.revoke(doomed.accessToken);
    held.release();
    await lookup;
    expect(h.sessions.peek(doomed.accessToken)).toBeUndefined();
    expect(await h.sessions.validate(doomed.accessToken)).toBeUndefined();

    const kept = await h.sessions.upgrade(h.issuer.issueLoginPair('kept').accessToken);
    held = holdNext(h, 'get', 'answer');
    const keptLookup = h.sessions.validate(kept.accessToken);
    await held.started;
    await h.sessions.upgrade(h.issuer.issueLoginPair('bystander').accessToken);
    held.release();
    expect(await keptLookup).toMatchObject({ id: 'kept' });
    expect(h.sessions.peek(kept.accessToken)).toMatchObject({ id: 'kept' });
  });
});
