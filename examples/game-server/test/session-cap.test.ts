/**
 * A session flood against the example server over real HTTP and WebSocket, in memory and on a
 * real Redis: refresh + upgrade mints a session pair per cycle with no password check, so each
 * principal may hold at most `session:max-per-principal` live pairs; a new pair beyond it revokes
 * the oldest and closes its sockets.
 */
import 'reflect-metadata';
import { createClient } from '@keyv/redis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { connectWs } from '../../../test/conformance/support/test-clients.js';
import { cacheProviders, signUp, startExampleServer, type Caller } from './support/example-server.js';

const redisUrl = inject('redisUrl');
const PASSWORD = 'correct horse battery';
const CAP = 3;

describe.each(cacheProviders(redisUrl))('sessions per principal %s', (_name, env, available) => {
  let base: string;
  let call: Caller;
  let close = async () => {};

  beforeAll(async () => {
    if (!available) return;
    ({ base, call, close } = await startExampleServer({ env: { SVC__SECURITY__SESSION__MAX_PER_PRINCIPAL: String(CAP), ...env }, realtime: true }));
  });
  afterAll(() => close());

  it.runIf(available)('refresh + upgrade cycles never hold more than the cap: the oldest pair is revoked and its socket closed with 4401', async () => {
    const { id: principal, ...signup } = await signUp(call, 'flood', PASSWORD);
    let login: { accessToken: string; refreshToken: string } = signup;
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
