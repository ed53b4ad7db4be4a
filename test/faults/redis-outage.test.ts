/**
 * Redis killed (SIGKILL) and restarted under traffic, end to end through the
 * example server: HTTP, WebSocket, TCP and UDP keep running, everything that
 * needs the store answers the typed `unavailable` (HTTP 503, wire code
 * `unavailable`) while Redis is down, open gates keep answering, service is full
 * again after the restart, and no session or JWT revoked before or during the
 * outage is accepted again. Redis runs with an fsynced append-only file, as in
 * production, so sessions survive its restart; a Redis restarted empty voids every
 * session and every JWT issued before (their revocations are gone with the data).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { findRedisServerBinary, startRedisServer, type RedisServer } from '../support/redis-server.js';
import { ConnectRefused, type RealtimeClient } from '../conformance/support/test-clients.js';
import { startGameStack, type GameStack } from './support/game-stack.js';

const hasRedis = findRedisServerBinary() !== undefined;
const label = (name: string) => (hasRedis ? name : `${name} — SKIPPED, redis-server not found`);
const UNAVAILABLE = { ok: false, error: { code: 'unavailable' } };

/**
 * Background traffic: a bounded loop of real requests on every transport, tallying outcomes.
 * Its moves act for a principal of their own, so the example's limit on `move` (20 per
 * second per principal) never refuses the test's own moves; traffic over it is answered
 * `rate_limited`, a typed answer like the others.
 */
function startTraffic(stack: GameStack, ws: RealtimeClient, udp: RealtimeClient, jwt: string) {
  const outcomes = new Map<string, number>();
  const tally = (key: string) => outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
  let running = true;
  const loop = (async () => {
    for (let i = 0; running && i < 2000; i++) {
      const [wsMove, udpMove, me] = await Promise.allSettled([
        ws.request('/game', 'move', { x: i, y: i }, 3000),
        udp.request('/game', 'move', { x: i, y: i }, 3000),
        stack.call('GET', '/api/me', undefined, jwt),
      ]);
      for (const [name, r] of [['ws', wsMove], ['udp', udpMove]] as const) {
        tally(r.status === 'rejected' ? `${name}:no-reply` : `${name}:${r.value.ok ? 'ok' : r.value.error?.code}`);
      }
      tally(me.status === 'rejected' ? 'http:failed' : `http:${me.value.status}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  })();
  return { outcomes, stop: async () => ((running = false), await loop) };
}

describe.skipIf(!hasRedis)(label('Redis killed and restarted under traffic'), () => {
  let redis: RedisServer;
  let dir: string;
  let stack: GameStack;
  const escaped: unknown[] = [];
  const onEscape = (error: unknown) => escaped.push(error);

  beforeAll(async () => {
    process.on('unhandledRejection', onEscape);
    process.on('uncaughtException', onEscape);
    dir = mkdtempSync(join(tmpdir(), 'portcullis-redis-'));
    redis = await startRedisServer(undefined, { persistDir: dir });
    stack = await startGameStack({ provider: 'redis', redisUrl: redis.url });
  });
  afterAll(async () => {
    process.off('unhandledRejection', onEscape);
    process.off('uncaughtException', onEscape);
    await stack?.close();
    await redis?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('fails closed with typed errors while down, serves fully after, and never revives a revoked credential', async () => {
    const live = await stack.session('live');
    const revokedBefore = await stack.session('before');
    const revokedDuring = await stack.session('during');
    const jwtLoggedOut = (await stack.login('jwtout')).accessToken;
    const jwtForTraffic = (await stack.login('traffic')).accessToken;
    expect((await stack.call('POST', '/auth/logout', undefined, revokedBefore.accessToken)).status).toBe(204);
    expect((await stack.call('POST', '/auth/logout', undefined, jwtLoggedOut)).status).toBe(204);

    const ws = await stack.connect.ws(live.accessToken);
    const udp = await stack.connect.udp(live.accessToken);
    const tcp = await stack.connect.tcp(live.accessToken);
    expect(await ws.request('/game', 'move', { x: 1, y: 1 })).toMatchObject({ ok: true, data: { by: expect.any(String) } });
    const trafficSession = await stack.session('traffic-mover');
    const trafficWs = await stack.connect.ws(trafficSession.accessToken);
    const trafficUdp = await stack.connect.udp(trafficSession.accessToken);
    const traffic = startTraffic(stack, trafficWs, trafficUdp, jwtForTraffic);
    await new Promise((resolve) => setTimeout(resolve, 200));

    await redis.kill();
    await vi.waitFor(async () => expect(await ws.request('/game', 'move', { x: 2, y: 2 })).toMatchObject(UNAVAILABLE), { timeout: 3000, interval: 20 });

    // HTTP: 503 with the typed body wherever the store is needed.
    const unavailable = { status: 503, json: { error: 'unavailable' } };
    expect(await stack.call('POST', '/auth/login/unamepwd', { username: 'live', password: 'correct horse battery staple' })).toMatchObject(unavailable);
    expect(await stack.call('POST', '/auth/signup', { email: 'new@example.com', username: 'newcomer', password: 'correct horse battery staple' })).toMatchObject(unavailable);
    expect(await stack.call('GET', '/api/me', undefined, jwtForTraffic)).toMatchObject(unavailable);
    expect(await stack.call('POST', '/auth/refresh', { refreshToken: live.refreshToken })).toMatchObject(unavailable);
    expect(await stack.call('POST', '/auth/logout', undefined, revokedDuring.accessToken)).toMatchObject(unavailable);
    // The wire: `unavailable` on shielded gates, open gates still answer, sockets stay open.
    expect(await tcp.request('/game', 'move', { x: 3, y: 3 })).toMatchObject(UNAVAILABLE);
    expect(await udp.request('/game', 'move', { x: 3, y: 3 })).toMatchObject(UNAVAILABLE);
    for (const client of [ws, tcp, udp]) expect(await client.request('/game', 'ping')).toMatchObject({ ok: true, data: 'pong' });
    await expect(stack.connect.ws(live.accessToken)).rejects.toEqual(new ConnectRefused({ status: 503 }));
    await expect(stack.connect.tcp(live.accessToken)).rejects.toMatchObject({ detail: { frame: { type: 'auth', ok: false, error: { code: 'unavailable' } } } });

    await new Promise((resolve) => setTimeout(resolve, 500)); // traffic keeps hitting the outage
    await redis.restart();
    await vi.waitFor(async () => expect(await ws.request('/game', 'move', { x: 4, y: 4 })).toMatchObject({ ok: true }), { timeout: 5000, interval: 50 });
    const seen = Object.fromEntries((await traffic.stop(), traffic.outcomes));

    // Full service: the live session on every transport, logins, upgrades, new sockets.
    for (const client of [ws, tcp, udp]) expect(await client.request('/game', 'move', { x: 5, y: 5 })).toMatchObject({ ok: true, data: { x: 5, y: 5 } });
    const fresh = await stack.session('after');
    const freshWs = await stack.connect.ws(fresh.accessToken);
    expect(await freshWs.request('/game', 'move', { x: 6, y: 6 })).toMatchObject({ ok: true });
    expect((await stack.call('GET', '/api/me', undefined, jwtForTraffic)).status).toBe(200);

    // Nothing revoked comes back; a logout refused during the outage succeeds when retried.
    await expect(stack.connect.ws(revokedBefore.accessToken)).rejects.toEqual(new ConnectRefused({ status: 401 }));
    expect((await stack.call('GET', '/api/me', undefined, jwtLoggedOut)).status).toBe(401);
    expect(await (await stack.connect.udp(revokedBefore.accessToken)).request('/game', 'move', { x: 7, y: 7 })).toMatchObject({ ok: false, error: { code: 'unauthorized' } });
    expect((await stack.call('POST', '/auth/logout', undefined, revokedDuring.accessToken)).status).toBe(204);
    await expect(stack.connect.ws(revokedDuring.accessToken)).rejects.toEqual(new ConnectRefused({ status: 401 }));

    // The traffic loop saw only successes and typed `unavailable` answers: no 500, no `internal`, no silence.
    expect(Object.keys(seen).filter((k) => !/^(ws|udp):(ok|unavailable|rate_limited)$|^http:(200|503)$/.test(k))).toEqual([]);
    expect(seen['ws:unavailable']).toBeGreaterThan(0);
    expect(seen['http:503']).toBeGreaterThan(0);
    await Promise.all([ws.close(), tcp.close(), udp.close(), freshWs.close(), trafficWs.close(), trafficUdp.close()]);
    expect(escaped).toEqual([]);
  });
});

describe.skipIf(!hasRedis)(label('Redis restarted empty (no persistence, or flushed)'), () => {
  let redis: RedisServer;
  let stack: GameStack;

  beforeAll(async () => {
    redis = await startRedisServer();
    stack = await startGameStack({ provider: 'redis', redisUrl: redis.url });
  });
  afterAll(async () => {
    await stack?.close();
    await redis?.stop();
  });

  it('refuses the sessions and JWTs Redis forgot, even on sockets whose session was cached, and serves new ones', async () => {
    const lost = await stack.session('forgotten');
    const upgraded = (await stack.login('upgraded')).accessToken;
    expect((await stack.call('POST', '/auth/upgrade', { token: upgraded }, upgraded)).status).toBe(200);
    const loggedOut = (await stack.login('logged-out')).accessToken;
    expect((await stack.call('POST', '/auth/logout', undefined, loggedOut)).status).toBe(204);
    const ws = await stack.connect.ws(lost.accessToken);
    const tcp = await stack.connect.tcp(lost.accessToken);
    for (const client of [ws, tcp]) expect(await client.request('/game', 'move', { x: 1, y: 1 })).toMatchObject({ ok: true });

    // iat has one-second resolution: let the restart fall in a later second than the tokens.
    await new Promise((resolve) => setTimeout(resolve, 1010 - (Date.now() % 1000)));
    await redis.kill();
    await redis.restart();
    await vi.waitFor(async () => expect((await stack.call('POST', '/auth/signup', { email: 'x@example.com', username: 'again', password: 'correct horse battery staple' })).status).toBe(201), { timeout: 5000, interval: 50 });

    for (const client of [ws, tcp]) expect(await client.request('/game', 'move', { x: 2, y: 2 })).toMatchObject({ ok: false, error: { code: 'unauthorized' } });
    await expect(stack.connect.ws(lost.accessToken)).rejects.toEqual(new ConnectRefused({ status: 401 }));
    // Their used-jti markers went with the data: JWTs from before the loss are refused, not revived.
    expect((await stack.call('GET', '/api/me', undefined, loggedOut)).status).toBe(401);
    expect((await stack.call('POST', '/auth/upgrade', { token: upgraded }, upgraded)).status).toBe(401);
    const fresh = await stack.connect.ws((await stack.session('again')).accessToken);
    expect(await fresh.request('/game', 'move', { x: 3, y: 3 })).toMatchObject({ ok: true });
    await Promise.all([ws.close(), tcp.close(), fresh.close()]);
  });
});
