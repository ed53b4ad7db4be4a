/**
 * A session flood against the example server over real HTTP and WebSocket, in memory and on a
 * real Redis: refresh + upgrade mints a session pair per cycle with no password check, so each
 * principal may hold at most `session:max-per-principal` live pairs; a new pair beyond it revokes
 * the oldest and closes its sockets.
 */
import 'reflect-metadata';
import { randomBytes, randomUUID } from 'node:crypto';
import { loadConfig, silentLoggerFactory } from '@portcullis/core';
import { createClient } from '@keyv/redis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { connectWs } from '../../../test/conformance/support/test-clients.js';
import { createGameServer, type GameServer } from '../src/game-server.js';
import { startRealtime, type RealtimeServers } from '../src/realtime.js';

const redisUrl = inject('redisUrl');
const PASSWORD = 'correct horse battery';
const CAP = 3;

const providers: Array<[string, Record<string, string>, boolean]> = [
  ['in memory', {}, true],
  ['on Redis', { SVC__PERSISTENCE__CACHE__PROVIDER: 'redis', SVC__PERSISTENCE__CACHE__URL: redisUrl ?? '' }, redisUrl !== null],
];

describe.each(providers)('sessions per principal %s', (_name, env, available) => {
  let server: GameServer;
  let realtime: RealtimeServers;
  let base: string;

  async function call(method: string, path: string, body?: unknown, token?: string) {
    const headers: Record<string, string> = {};
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (token) headers.authorization = `Bearer ${token}`;
    const response = await fetch(`${base}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await response.text();
    return { status: response.status, json: text ? JSON.parse(text) : undefined };
  }

  beforeAll(async () => {
    if (!available) return;
    const config = loadConfig({
      env: {
        SVC__SECURITY__MODE: 'jwt',
        SVC__SECURITY__KEY: randomBytes(32).toString('base64'),
        SVC__SECURITY__PASSWORD__WORK_FACTOR: '4',
        SVC__SECURITY__SESSION__MAX_PER_PRINCIPAL: String(CAP),
        ...env,
      },
      tree: {},
    });
    server = await createGameServer({ config, port: 0, loggers: silentLoggerFactory });
    base = (await server.listen()).http;
    realtime = await startRealtime(server.container, server.httpServer, { host: '127.0.0.1', tcpPort: 0, udpPort: 0 });
  });
  afterAll(async () => {
    await realtime?.close();
    await server?.close();
  });

  it.runIf(available)('refresh + upgrade cycles never hold more than the cap: the oldest pair is revoked and its socket closed with 4401', async () => {
    const username = `flood${randomUUID().slice(0, 8)}`;
    const signup = await call('POST', '/auth/signup', { email: `${username}@example.com`, username, password: PASSWORD });
    expect(signup.status).toBe(201);
    const principal = (await call('GET', '/api/me', undefined, signup.json.accessToken)).json.id as string;
    let login = signup.json as { accessToken: string; refreshToken: string };
    const sessions: Array<{ accessToken: string; refreshToken: string }> = [];
    const cycle = async () => {
      const upgraded = await call('POST', '/auth/upgrade', { token: login.accessToken }, login.accessToken);
      expect(upgraded.status).toBe(200);
      sessions.push(upgraded.json);
      const refreshed = await call('POST', '/auth/refresh', { refreshToken: login.refreshToken });
      expect(refreshed.status).toBe(200);
      login = refreshed.json;
    };
    for (let i = 0; i < CAP; i++) await cycle();
    const oldest = await connectWs(`${base.replace(/^http/, 'ws')}/ws`, sessions[0]!.accessToken);
    expect(await oldest.request('/game', 'move', { x: 0, y: 0 })).toMatchObject({ ok: true });

    await cycle();

    expect(await oldest.closed).toEqual({ code: 4401 });
    expect((await call('POST', '/auth/refresh', { refreshToken: sessions[0]!.refreshToken })).status).toBe(401);
    for (const live of sessions.slice(1)) expect((await call('POST', '/auth/logout', undefined, live.accessToken)).status).toBe(204);

    for (let i = 0; i < 10; i++) await cycle();
    const alive = [];
    for (const s of sessions.slice(-CAP - 2)) alive.push((await call('POST', '/auth/refresh', { refreshToken: s.refreshToken })).status);
    expect(alive).toEqual([401, 401, 200, 200, 200]);
    if (env.SVC__PERSISTENCE__CACHE__PROVIDER === 'redis') {
      const client = createClient({ url: redisUrl! });
      await client.connect();
      try {
        expect(Number(await client.sCard(`portcullis:principal-sessions:${principal}`))).toBeLessThanOrEqual(CAP);
      } finally {
        await client.close();
      }
    }
  });
});
