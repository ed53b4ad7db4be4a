import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signupAndLogin, startHarness, type Harness } from './support/http-harness.js';
import {
  ApiController, ClassShieldedController, SessionShieldedBaseController, SessionShieldedChildController, SubclassController, TestAuthController, admins,
} from './support/test-controllers.js';

let h: Harness;
let player: string;
let admin: string;
let session: string;
beforeAll(async () => {
  h = await startHarness({
    controllers: [TestAuthController, ApiController, ClassShieldedController, SubclassController, SessionShieldedBaseController, SessionShieldedChildController],
  });
  player = (await signupAndLogin(h, 'player1')).accessToken;
  admins.add('admin1');
  admin = (await signupAndLogin(h, 'admin1')).accessToken;
  const other = (await signupAndLogin(h, 'player2')).accessToken;
  session = (await h.request('POST', '/auth/upgrade', { token: other, body: { token: other } })).json.accessToken;
});
afterAll(() => h.close());

describe('shields on controllers', () => {
  it('leaves a route without any shield open to anyone', async () => {
    expect(await h.get('/api/open')).toMatchObject({ status: 200, json: { open: true, id: null } });
  });

  it('@JwtShield takes a JWT access token and refuses a session token, a refresh token and nothing', async () => {
    expect((await h.get('/api/me', player)).status).toBe(200);
    expect((await h.get('/api/me', session)).status).toBe(401);
    expect((await h.get('/api/me')).status).toBe(401);
    const login = await h.post('/auth/login/unamepwd', { username: 'player1', password: 'correct horse battery' });
    expect((await h.get('/api/me', login.json.refreshToken)).status).toBe(401);
  });

  it('reads the Authorization scheme case-insensitively and takes nothing but Bearer', async () => {
    for (const scheme of ['bearer', 'BEARER', 'Bearer  ']) {
      expect((await h.request('GET', '/api/me', { headers: { authorization: `${scheme} ${player}` } })).status).toBe(200);
    }
    expect((await h.request('GET', '/api/me', { headers: { authorization: `Basic ${player}` } })).status).toBe(401);
    expect((await h.request('GET', '/api/me', { headers: { authorization: player } })).status).toBe(401);
  });

  it('@SessionShield takes a session token and refuses a JWT', async () => {
    expect((await h.get('/api/session', session)).json).toMatchObject({ via: 'session' });
    expect((await h.get('/api/session', player)).status).toBe(401);
  });

  it('a custom shield resolves through DI with its injected service; it can answer 401 or 403', async () => {
    expect(await h.get('/api/bot', 'key-ada')).toMatchObject({ status: 200, json: { bot: 'ada-bot', roles: ['bot'] } });
    expect((await h.get('/api/bot', 'key-banned')).status).toBe(403);
    expect((await h.get('/api/bot', player)).status).toBe(401);
  });

  it('a class shield covers every route of the class; a method shield replaces it for that method', async () => {
    expect((await h.get('/class/a', player)).json).toMatchObject({ route: 'a' });
    expect((await h.get('/class/a')).status).toBe(401);
    expect((await h.get('/class/b', 'key-ada')).json).toMatchObject({ route: 'b', id: 'ada-bot' });
    expect((await h.get('/class/b', player)).status).toBe(401);
  });

  it('a subclass inherits the class shield and routes, adds its own @Authorize, and an override keeps its route', async () => {
    expect((await h.get('/sub/a', admin)).json).toMatchObject({ route: 'a' });
    expect((await h.get('/sub/c', admin)).json).toMatchObject({ route: 'c' });
    expect((await h.get('/sub/c', player)).status).toBe(403);
    expect((await h.get('/sub/c')).status).toBe(401);
    expect((await h.get('/sub/overridden', admin)).json).toEqual({ route: 'sub' });
    expect((await h.get('/class/overridden', player)).json).toEqual({ route: 'base' });
    expect((await h.get('/sub/b', 'key-ada')).status).toBe(403);
  });

  it('a subclass with no shield or @Authorize of its own inherits the base\'s class @SessionShield', async () => {
    expect((await h.get('/sbase/whoami', session)).json).toMatchObject({ route: 'whoami', via: 'session' });
    for (const path of ['/schild/whoami', '/schild/own']) {
      const answer = await h.get(path, session);
      expect(answer.status).toBe(200);
      expect(answer.json).toMatchObject({ id: expect.any(String), via: 'session' });
      expect((await h.get(path, player)).status).toBe(401);
      expect((await h.get(path)).status).toBe(401);
    }
  });

  it('@Authorize with a role: 401 without a credential, 403 without the role, 200 with it', async () => {
    expect((await h.get('/api/admin')).status).toBe(401);
    expect((await h.get('/api/admin', player)).status).toBe(403);
    expect((await h.get('/api/admin', admin)).status).toBe(200);
  });

  it('answers 503 unavailable, retry after a second, when a shield fails, never letting the request through', async () => {
    const answer = await h.get('/api/broken', player);
    expect(answer.status).toBe(503);
    expect(answer.headers.get('retry-after')).toBe('1');
    expect(answer.json).toEqual({ error: 'unavailable', message: expect.any(String) });
  });

  it('routes PUT, PATCH and DELETE; a handler returning nothing answers 204', async () => {
    expect((await h.request('PUT', '/api/put')).json).toEqual({ method: 'put' });
    expect((await h.request('PATCH', '/api/patch')).json).toEqual({ method: 'patch' });
    expect((await h.request('DELETE', '/api/delete')).status).toBe(204);
  });
});

describe('caller helpers', () => {
  it('principalId, principalName and clientIp describe the caller', async () => {
    const me = await h.get('/api/me', player);
    expect(me.json).toEqual({ id: expect.stringMatching(/^[0-9a-f-]{36}$/), name: 'player1', ip: '127.0.0.1' });
  });

  it('clientIp ignores X-Forwarded-For unless trust proxy is configured', async () => {
    const spoofed = await h.request('GET', '/api/me', { token: player, headers: { 'x-forwarded-for': '203.0.113.9' } });
    expect(spoofed.json.ip).toBe('127.0.0.1');
    const proxied = await startHarness({ controllers: [TestAuthController, ApiController], app: { trustProxy: 'loopback' } });
    try {
      const token = (await signupAndLogin(proxied, 'proxied')).accessToken;
      const answer = await proxied.request('GET', '/api/me', { token, headers: { 'x-forwarded-for': '198.51.100.4, 203.0.113.9' } });
      expect(answer.json.ip).toBe('203.0.113.9');
    } finally {
      await proxied.close();
    }
  });
});
