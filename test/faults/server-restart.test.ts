/**
 * A server restarted: with Redis, sessions, accounts and revocations live in Redis,
 * so a second instance on the same Redis (running beside the first, or after it
 * stopped) accepts the sessions the first issued and still refuses what it
 * revoked. With the in-memory store everything is lost on restart, as
 * docs/sessions.md says: sessions and accounts are gone, and — because the
 * revocations are gone too — JWTs issued before the restart are refused rather
 * than trusted again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findRedisServerBinary, startRedisServer, type RedisServer } from '../support/redis-server.js';
import { ConnectRefused } from '../conformance/support/test-clients.js';
import { startGameStack, type GameStack } from './support/game-stack.js';

const hasRedis = findRedisServerBinary() !== undefined;
const label = (name: string) => (hasRedis ? name : `${name} — SKIPPED, redis-server not found`);
const PASSWORD = 'correct horse battery staple';

describe.skipIf(!hasRedis)(label('server restarted on Redis'), () => {
  let redis: RedisServer;
  const stacks: GameStack[] = [];
  const start = async () => {
    const stack = await startGameStack({ provider: 'redis', redisUrl: redis.url });
    stacks.push(stack);
    return stack;
  };

  beforeAll(async () => {
    redis = await startRedisServer();
  });
  afterAll(async () => {
    await Promise.all(stacks.map((s) => s.close()));
    await redis?.stop();
  });

  it('a second instance accepts the first one\'s sessions, and so does the first one restarted', async () => {
    const first = await start();
    const kept = await first.session('keeper');
    const revoked = await first.session('quitter');
    const loggedOutJwt = (await first.login('jwt-quitter')).accessToken;
    const liveJwt = (await first.login('jwt-keeper')).accessToken;
    expect((await first.call('POST', '/auth/logout', undefined, revoked.accessToken)).status).toBe(204);
    expect((await first.call('POST', '/auth/logout', undefined, loggedOutJwt)).status).toBe(204);

    const second = await start();
    const ws = await second.connect.ws(kept.accessToken);
    expect(await ws.request('/game', 'move', { x: 1, y: 2 })).toMatchObject({ ok: true, data: { x: 1, y: 2 } });
    await ws.close();

    await first.close();
    stacks.splice(stacks.indexOf(first), 1);
    const restarted = await start();
    for (const name of ['ws', 'tcp', 'udp'] as const) {
      const client = await restarted.connect[name](kept.accessToken);
      expect(await client.request('/game', 'move', { x: 3, y: 4 })).toMatchObject({ ok: true, data: { x: 3, y: 4 } });
      await client.close();
    }
    expect((await restarted.call('GET', '/api/me', undefined, liveJwt)).status).toBe(200);
    expect((await restarted.call('POST', '/auth/login/unamepwd', { username: 'keeper', password: PASSWORD })).status).toBe(200);
    const refreshed = await restarted.call('POST', '/auth/refresh', { refreshToken: kept.refreshToken });
    expect(refreshed).toMatchObject({ status: 200, json: { accessToken: expect.stringMatching(/;session$/) } });

    await expect(restarted.connect.ws(revoked.accessToken)).rejects.toEqual(new ConnectRefused({ status: 401 }));
    expect((await restarted.call('GET', '/api/me', undefined, loggedOutJwt)).status).toBe(401);
  });
});

describe('server restarted with the in-memory store', () => {
  let stack: GameStack | undefined;
  afterAll(async () => stack?.close());

  it('loses sessions, accounts and revocations, and refuses every credential issued before the restart', async () => {
    stack = await startGameStack({ provider: 'inmemory' });
    const session = await stack.session('ephemeral');
    const loggedOutJwt = (await stack.login('ephemeral-jwt')).accessToken;
    const jwt = (await stack.login('ephemeral-jwt')).accessToken;
    expect((await stack.call('POST', '/auth/logout', undefined, loggedOutJwt)).status).toBe(204);
    await stack.close();
    // iat has one-second resolution: the restart must fall in a later second than the tokens.
    await new Promise((resolve) => setTimeout(resolve, 1100));

    stack = await startGameStack({ provider: 'inmemory' });
    await expect(stack.connect.ws(session.accessToken)).rejects.toEqual(new ConnectRefused({ status: 401 }));
    const udp = await stack.connect.udp(session.accessToken);
    expect(await udp.request('/game', 'move', { x: 1, y: 1 })).toMatchObject({ ok: false, error: { code: 'unauthorized' } });
    await udp.close();
    expect((await stack.call('POST', '/auth/refresh', { refreshToken: session.refreshToken })).status).toBe(401);
    expect((await stack.call('POST', '/auth/login/unamepwd', { username: 'ephemeral', password: PASSWORD })).status).toBe(401);
    expect((await stack.call('GET', '/api/me', undefined, loggedOutJwt)).status).toBe(401);
    expect((await stack.call('GET', '/api/me', undefined, jwt)).status).toBe(401);
    expect((await stack.call('POST', '/auth/upgrade', { token: jwt }, jwt)).status).toBe(401);

    const fresh = await stack.session('ephemeral');
    const ws = await stack.connect.ws(fresh.accessToken);
    expect(await ws.request('/game', 'move', { x: 2, y: 2 })).toMatchObject({ ok: true });
    await ws.close();
  });
});
