/**
 * What someone who reads the Redis (a backup, a replica, `MONITOR`, a leaked dump)
 * learns: no key and no value holds a live bearer token or the UUID of a session token.
 */
import { createClient } from '@keyv/redis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { findRedisServerBinary } from '../../../test/support/redis-server.js';
import { createHarness, type SessionHarness } from './support/session-harness.js';

const redisUrl = inject('redisUrl');
const hasRedis = redisUrl !== null && findRedisServerBinary() !== undefined;
const label = (name: string) => (hasRedis ? name : `${name} — SKIPPED, redis-server not found`);

type Admin = ReturnType<typeof createClient>;

/** Every key under `prefix` with its value, whatever the key's type. */
async function dump(admin: Admin, prefix: string): Promise<string[]> {
  const lines: string[] = [];
  for await (const keys of admin.scanIterator({ MATCH: `${prefix}*`, COUNT: 1000 })) {
    for (const key of [keys].flat()) {
      const type = await admin.type(key);
      const value =
        type === 'string' ? await admin.get(key)
        : type === 'set' ? await admin.sMembers(key)
        : type === 'hash' ? await admin.hGetAll(key)
        : type === 'zset' ? await admin.zRange(key, 0, -1)
        : type === 'list' ? await admin.lRange(key, 0, -1)
        : `<${type}>`;
      lines.push(`${key} ${JSON.stringify(value)}`);
    }
  }
  return lines;
}

describe.skipIf(!hasRedis)(label('tokens at rest on Redis'), () => {
  const prefix = `at-rest-${Date.now()}`;
  let h: SessionHarness;
  let admin: Admin;

  beforeAll(async () => {
    h = await createHarness({ provider: 'redis', redisUrl }, prefix);
    admin = createClient({ url: redisUrl! });
    await admin.connect();
  });
  afterAll(async () => {
    await admin.quit();
    await h.close();
  });

  it('keeps neither session tokens, their UUIDs nor JWTs in any key or value after login, upgrade and refresh', async () => {
    const secrets: string[] = [];
    const login = h.issuer.issueLoginPair('at-rest-player');
    const rotatedLogin = await h.sessions.refresh(login.refreshToken);
    if (rotatedLogin.kind !== 'login') throw new Error('expected a login pair');
    const session = await h.sessions.upgrade(rotatedLogin.pair.accessToken);
    expect(await h.sessions.validate(session.accessToken)).toMatchObject({ id: 'at-rest-player' });
    const refreshed = await h.sessions.refresh(session.refreshToken);
    if (refreshed.kind !== 'session') throw new Error('expected a session pair');
    const second = await h.sessions.upgrade(h.issuer.issueLoginPair('at-rest-player').accessToken);
    const loggedOut = await h.sessions.upgrade(h.issuer.issueLoginPair('at-rest-other').accessToken);
    await h.sessions.revoke(loggedOut.accessToken);
    for (const s of [session, refreshed.session, second, loggedOut]) secrets.push(s.accessToken, s.refreshToken);
    secrets.push(login.accessToken, login.refreshToken, rotatedLogin.pair.accessToken, rotatedLogin.pair.refreshToken);

    const lines = await dump(admin, prefix);
    expect(lines.some((line) => line.includes(':session:'))).toBe(true);
    expect(lines.some((line) => line.includes(':session-refresh:'))).toBe(true);
    for (const secret of secrets) {
      const uuid = secret.split(';')[0]!;
      const leaks = lines.filter((line) => line.includes(secret) || line.includes(uuid));
      expect(leaks, `${secret.slice(0, 8)}… found at rest`).toEqual([]);
    }
    // The store still works from digests alone: the live pairs answer, the logged-out one does not.
    expect(await h.sessions.validate(refreshed.session.accessToken)).toMatchObject({ id: 'at-rest-player' });
    expect(await h.sessions.validate(second.accessToken)).toMatchObject({ id: 'at-rest-player' });
    expect(await h.sessions.validate(loggedOut.accessToken)).toBeUndefined();
    expect(await h.sessions.revokeAllFor('at-rest-player')).toBe(2);
    expect(await h.sessions.validate(second.accessToken)).toBeUndefined();
  });

  it('publishes no session token nor its UUID on the revocation channel when a session is refreshed', async () => {
    const messages: string[] = [];
    const listener = admin.duplicate();
    await listener.connect();
    await listener.pSubscribe(`${prefix}*`, (message) => void messages.push(message));
    try {
      const login = h.issuer.issueLoginPair('channel-player');
      const session = await h.sessions.upgrade(login.accessToken);
      const refreshed = await h.sessions.refresh(session.refreshToken);
      if (refreshed.kind !== 'session') throw new Error('expected a session pair');
      await h.sessions.revoke(refreshed.session.accessToken);
      // Messages on one connection arrive in order: once the probe is in, every earlier one is.
      await admin.publish(`${prefix}:probe`, 'end');
      await expect.poll(() => messages.includes('end')).toBe(true);
      expect(messages.length).toBeGreaterThanOrEqual(3); // upgrade, refresh, logout
      expect(messages.some((m) => m.includes('successors'))).toBe(true);
      for (const secret of [session.accessToken, session.refreshToken, refreshed.session.accessToken, refreshed.session.refreshToken]) {
        const uuid = secret.split(';')[0]!;
        const leaks = messages.filter((m) => m.includes(secret) || m.includes(uuid));
        expect(leaks, `${secret.slice(0, 8)}… published on the channel`).toEqual([]);
      }
    } finally {
      await listener.quit();
    }
  });
});
