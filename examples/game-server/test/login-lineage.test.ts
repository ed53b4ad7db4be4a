/**
 * Attacks on the lineage of tokens, against the example server over real HTTP and
 * WebSocket, in memory and on a real Redis: a token derived through `POST /api/token`
 * must end with the login it was derived from, and `revokeAllFor` must outlive every
 * token it covers, however long the `AccessTokenIssuer` made it.
 */
import 'reflect-metadata';
import { AccessTokenIssuer, TokenSessionSync } from '@portcullis/core';
import { createClient } from '@keyv/redis';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { connectWs } from '../../../test/conformance/support/test-clients.js';
import type { GameServer } from '../src/game-server.js';
import { cacheProviders, signUp, startExampleServer, type Caller } from './support/example-server.js';

const redisUrl = inject('redisUrl');
const DAY_MS = 86_400_000;
const PASSWORD = 'correct horse battery';

describe.each(cacheProviders(redisUrl))('token lineage %s', (_name, env, available) => {
  let server: GameServer;
  let base: string;
  let call: Caller;
  let close = async () => {};

  const login = () => signUp(call, 'p', PASSWORD);

  beforeAll(async () => {
    if (!available) return;
    ({ server, base, call, close } = await startExampleServer({ env, realtime: true }));
  });
  afterEach(() => vi.useRealTimers());
  afterAll(() => close());

  it.runIf(available)('logging out a login ends the tokens derived from it with POST /api/token, and the sessions upgraded from those', async () => {
    const owner = await login();
    const derived = await call('POST', '/api/token', undefined, owner.accessToken);
    expect(derived.status).toBe(200);
    const spare = await call('POST', '/api/token', undefined, owner.accessToken);
    const upgraded = await call('POST', '/auth/upgrade', { token: derived.json.accessToken }, derived.json.accessToken);
    expect(upgraded.status).toBe(200);
    const socket = await connectWs(`${base.replace(/^http/, 'ws')}/ws`, upgraded.json.accessToken);
    expect(await socket.request('/game', 'move', { x: 1, y: 1 })).toMatchObject({ ok: true });

    expect((await call('POST', '/auth/logout', undefined, owner.accessToken)).status).toBe(204);

    expect(await socket.closed).toEqual({ code: 4401 });
    expect((await call('GET', '/api/me', undefined, spare.json.accessToken)).status).toBe(401);
    expect((await call('POST', '/auth/refresh', { refreshToken: upgraded.json.refreshToken })).status).toBe(401);
    expect((await call('POST', '/auth/logout', undefined, upgraded.json.accessToken)).status).toBe(401);
    // The login's own refresh token is gone too, so nothing can mint a new derived token.
    expect((await call('POST', '/auth/refresh', { refreshToken: owner.refreshToken })).status).toBe(401);
  });

  it.runIf(available)('another login of the same player keeps its derived tokens when one login logs out', async () => {
    const first = await login();
    const second = await call('POST', '/auth/login/unamepwd', { username: (await call('GET', '/api/me', undefined, first.accessToken)).json.name, password: PASSWORD });
    const derived = await call('POST', '/api/token', undefined, second.json.accessToken);
    expect((await call('POST', '/auth/logout', undefined, first.accessToken)).status).toBe(204);
    expect((await call('GET', '/api/me', undefined, derived.json.accessToken)).status).toBe(200);
  });

  it.runIf(available)('revokeAllFor ends derived tokens and the sessions upgraded from them', async () => {
    const owner = await login();
    const derived = await call('POST', '/api/token', undefined, owner.accessToken);
    const upgraded = await call('POST', '/auth/upgrade', { token: derived.json.accessToken }, derived.json.accessToken);
    expect(upgraded.status).toBe(200);
    await server.container.resolve(TokenSessionSync).revokeAllFor(owner.id);
    expect((await call('POST', '/auth/refresh', { refreshToken: upgraded.json.refreshToken })).status).toBe(401);
    expect((await call('GET', '/api/me', undefined, owner.accessToken)).status).toBe(401);
  });

  it.runIf(available)('a 30-day AccessTokenIssuer token stays revoked after revokeAllFor for all of its 30 days', async () => {
    const owner = await login();
    const long = server.container.resolve(AccessTokenIssuer).issue(owner.id, { name: 'long-lived' }, 30 * 86_400);
    expect((await call('GET', '/api/me', undefined, long.token)).status).toBe(200);
    await server.container.resolve(TokenSessionSync).revokeAllFor(owner.id);
    expect((await call('GET', '/api/me', undefined, long.token)).status).toBe(401);
    if (env.SVC__PERSISTENCE__CACHE__PROVIDER === 'redis') {
      // Redis keeps time itself: the cut-off's own TTL must cover the token's 30 days.
      const client = createClient({ url: redisUrl! });
      await client.connect();
      try {
        expect(Number(await client.pTTL(`portcullis:principal-cutoff:${owner.id}`))).toBeGreaterThan(30 * DAY_MS);
      } finally {
        await client.close();
      }
    } else {
      vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 8 * DAY_MS });
      expect((await call('GET', '/api/me', undefined, long.token)).status).toBe(401);
      vi.setSystemTime(Date.now() + 21 * DAY_MS);
      expect((await call('GET', '/api/me', undefined, long.token)).status).toBe(401);
    }
  });
});
