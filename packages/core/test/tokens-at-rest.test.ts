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

/**
 * A token as it could leak: whole, its UUID, and a session token's 16 UUID bytes in hex and in
 * base64url, the latter at each of the three offsets bytes can sit at in a longer base64url text
 * (what a seal that forgot its pad would hold): the characters that those bytes alone decide.
 */
function formsOf(secret: string): string[] {
  const uuid = secret.split(';')[0]!;
  if (!secret.endsWith(';session')) return [secret, uuid];
  const bytes = Buffer.from(uuid.replaceAll('-', ''), 'hex');
  const encoded = [0, 1, 2].map((offset) => {
    const text = Buffer.concat([Buffer.alloc(offset), bytes]).toString('base64url');
    const whole = Math.floor((offset + bytes.length) / 3) * 4;
    return offset === 0 ? text.slice(0, whole) : text.slice(4, whole);
  });
  return [secret, uuid, bytes.toString('hex'), ...encoded];
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
      const leaks = lines.filter((line) => formsOf(secret).some((form) => line.includes(form)));
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
        const leaks = messages.filter((m) => formsOf(secret).some((form) => m.includes(form)));
        expect(leaks, `${secret.slice(0, 8)}… published on the channel`).toEqual([]);
      }
    } finally {
      await listener.quit();
    }
  });
});
