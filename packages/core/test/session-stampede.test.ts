/**
 * Concurrent validations of one session token share one store read (single
 * flight), so a wave of messages arriving just after a near-cache entry expired
 * costs one lookup, not one per message; and a revocation in the middle of a read
 * is never hidden from callers that arrive after it. And a revocation that runs while a
 * new session pair is being written must not miss it: an upgrade or a session refresh
 * racing a logout of its login family, or a revokeAllFor of its principal, ends with no
 * live session. Those tests hold a real store's write or read open while the revocation runs.
 */
import { afterEach, describe, expect, inject, it, vi } from 'vitest';
import { findRedisServerBinary } from '../../../test/support/redis-server.js';
import { createHarness, redisTopologies, type ProviderName, type SessionHarness } from './support/session-harness.js';

const redisUrl = inject('redisUrl');
const hasRedis = redisUrl !== null && findRedisServerBinary() !== undefined;
const providers: ProviderName[] = hasRedis ? ['inmemory', 'redis'] : ['inmemory'];
let h: SessionHarness | undefined;

/**
 * The store read a session check makes: `get` in memory; on Redis `getMany`, which carries
 * the check together with the other near-cache misses of its event-loop turn.
 */
function sessionRead(harness: SessionHarness): 'get' | 'getMany' {
  return harness.stores.cache.peekMany ? 'get' : 'getMany';
}

afterEach(async () => {
  vi.restoreAllMocks();
  await h?.close();
  h = undefined;
});

describe.each(providers)('session validation under a stampede (%s)', (provider) => {
  it('answers 200 concurrent validations of one token with one store read', async () => {
    h = await createHarness({ provider, redisUrl, security: { session: { 'near-cache-seconds': 0 } } });
    const session = await h.sessions.upgrade(h.issuer.issueLoginPair('stampede').accessToken);
    const reads = vi.spyOn(h.stores.cache, sessionRead(h));
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

/**
 * Holds the store's next `method` call (a session's write, or a session check's read) until `release()`: a write is made only then
 * (`delay: 'call'`), a read is made at once and answered only then (`delay: 'answer'`).
 * `started` resolves once the call was asked for. Where the store runs scripts, a session's
 * writes are one script each: the next script is the write held.
 */
function holdNext(harness: SessionHarness, method: 'write' | 'read', delay: 'call' | 'answer') {
  const { cache } = harness.stores;
  type Call = (...args: unknown[]) => Promise<unknown>;
  const read = sessionRead(harness);
  const original = (method === 'read' ? cache[read].bind(cache) : cache.scripts ? cache.scripts.run.bind(cache.scripts) : cache.write.bind(cache)) as Call;
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let markStarted!: () => void;
  const started = new Promise<void>((resolve) => (markStarted = resolve));
  const spy = method === 'read' ? vi.spyOn(cache, read) : spyOnWrite(harness);
  spy.mockImplementationOnce((async (...args: unknown[]) => {
    const early = delay === 'answer' ? original(...args) : undefined;
    if (early) await early;
    markStarted();
    await gate;
    return early ?? original(...args);
  }) as never);
  return { started, release };
}

const holdNextWrite = (harness: SessionHarness) => holdNext(harness, 'write', 'call');

/** Spies on what a session's writes go through: the store's script runner where it has one, else `write`. */
function spyOnWrite(harness: SessionHarness) {
  const { cache } = harness.stores;
  return cache.scripts ? vi.spyOn(cache.scripts, 'run') : vi.spyOn(cache, 'write');
}

/**
 * The races run on memory and on Redis in every topology: a single server and a sentinel set run
 * each write as one script, a cluster runs the step-by-step path (as memory does) on writes that
 * land on different primaries.
 */
const raceStores: Array<{ name: string; provider: ProviderName; env?: Readonly<Record<string, string>> }> = [
  { name: 'inmemory', provider: 'inmemory' },
  ...(hasRedis ? redisTopologies().map(({ name, env }) => ({ name: `redis ${name}`, provider: 'redis' as const, env })) : []),
];

describe.each(raceStores)('revocations racing new session pairs ($name)', ({ provider, env }) => {
  type Login = ReturnType<SessionHarness['issuer']['issueLoginPair']>;
  type Race = [name: string, begin: (h: SessionHarness, login: Login) => Promise<() => Promise<unknown>>, revoke: (h: SessionHarness, login: Login) => Promise<unknown>];
  const upgrade: Race[1] = async (h, login) => () => h.sessions.upgrade(login.accessToken);
  const logOutFamily: Race[2] = (h, login) => h.sessions.revoke(login.refreshToken);
  it.each<Race>([
    ['an upgrade racing a logout of its login family', upgrade, logOutFamily],
    ['an upgrade racing revokeAllFor of its principal', upgrade, (h) => h.sessions.revokeAllFor('racer')],
    [
      'a session refresh racing a logout of its login family',
      async (h, login) => {
        const session = await h.sessions.upgrade(login.accessToken);
        return () => h.sessions.refresh(session.refreshToken);
      },
      logOutFamily,
    ],
    [
      'a session refresh racing revokeAllFor of its principal',
      async (h, login) => {
        const session = await h.sessions.upgrade(login.accessToken);
        return () => h.sessions.refresh(session.refreshToken);
      },
      (h) => h.sessions.revokeAllFor('racer'),
    ],
  ])('%s is refused and leaves no session', async (_name, begin, revoke) => {
    h = await createHarness({ provider, redisUrl, env });
    const login = h.issuer.issueLoginPair('racer');
    const race = await begin(h, login);
    const held = holdNextWrite(h);
    const racing = race();
    await held.started;
    await revoke(h, login);
    held.release();
    await expect(racing).rejects.toMatchObject({ reason: 'revoked' });
    expect(await h.sessions.revokeAllFor('racer')).toBe(0);
  });

  it('an upgrade whose store write fails can be tried again with the same JWT', async () => {
    h = await createHarness({ provider, redisUrl, env });
    const login = h.issuer.issueLoginPair('retry');
    spyOnWrite(h).mockRejectedValueOnce(new Error('write lost'));
    await expect(h.sessions.upgrade(login.accessToken)).rejects.toThrow('write lost');
    expect(await h.sessions.validate((await h.sessions.upgrade(login.accessToken)).accessToken)).toMatchObject({ id: 'retry' });
  });

  it('an upgrade whose reply is lost after another upgrade won leaves the winner\'s marker: the JWT stays spent', async () => {
    h = await createHarness({ provider, redisUrl, env });
    const login = h.issuer.issueLoginPair('twice');
    await h.sessions.upgrade(login.accessToken);
    // The second attempt reaches the store, which refuses it, but its answer never comes back
    // (a timeout while the command was on its way): the caller cannot tell what happened.
    const write = spyOnWrite(h);
    const reach = write.getMockImplementation() ?? (h.stores.cache.scripts ? h.stores.cache.scripts.run.bind(h.stores.cache.scripts) : h.stores.cache.write.bind(h.stores.cache));
    write.mockImplementationOnce(async (...args: unknown[]) => {
      await (reach as (...a: unknown[]) => Promise<unknown>)(...args);
      throw new Error('reply lost');
    });
    await expect(h.sessions.upgrade(login.accessToken)).rejects.toBeDefined();
    write.mockRestore();
    await expect(h.sessions.upgrade(login.accessToken)).rejects.toMatchObject({ reason: 'revoked' });
  });

  it('answers a check that a revocation overtook as revoked, so no connection is admitted after the event that should close it', async () => {
    h = await createHarness({ provider, redisUrl, env });
    const doomed = await h.sessions.upgrade(h.issuer.issueLoginPair('overtaken').accessToken);
    const held = holdNext(h, 'read', 'answer');
    const admission = h.sessions.validate(doomed.accessToken);
    await held.started;
    await h.sessions.revoke(doomed.accessToken);
    held.release();
    expect(await admission).toBeUndefined();
  });

  it('does not near-cache a session revoked while its lookup was in flight, yet an unrelated upgrade does not stop caching', async () => {
    h = await createHarness({ provider, redisUrl, env });
    const doomed = await h.sessions.upgrade(h.issuer.issueLoginPair('doomed').accessToken);
    let held = holdNext(h, 'read', 'answer');
    const lookup = h.sessions.validate(doomed.accessToken);
    await held.started;
    await h.sessions.revoke(doomed.accessToken);
    held.release();
    await lookup;
    expect(h.sessions.peek(doomed.accessToken)).toBeUndefined();
    expect(await h.sessions.validate(doomed.accessToken)).toBeUndefined();

    const kept = await h.sessions.upgrade(h.issuer.issueLoginPair('kept').accessToken);
    held = holdNext(h, 'read', 'answer');
    const keptLookup = h.sessions.validate(kept.accessToken);
    await held.started;
    await h.sessions.upgrade(h.issuer.issueLoginPair('bystander').accessToken);
    held.release();
    expect(await keptLookup).toMatchObject({ id: 'kept' });
    expect(h.sessions.peek(kept.accessToken)).toMatchObject({ id: 'kept' });
  });
});
