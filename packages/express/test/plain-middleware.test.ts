import 'reflect-metadata';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authorize, clientIp, jsonBody, jwtShield, mountControllers, portcullisErrorHandler, principalId, sessionShield, shield } from '../src/index.js';
import { signupAndLogin, startHarness, type Harness } from './support/http-harness.js';
import { ApiKeyAuth, TestAuthController, admins } from './support/test-controllers.js';

let h: Harness;
let player: string;
let admin: string;
let session: string;
beforeAll(async () => {
  h = await startHarness({
    build: (container) => {
      const app = express();
      mountControllers(app, container, [TestAuthController]);
      const who = (req: express.Request, res: express.Response) => res.json({ id: principalId(req), ip: clientIp(req) });
      app.get('/plain/jwt', jwtShield({ container }), who);
      app.get('/plain/session', sessionShield({ container }), who);
      app.get('/plain/admin', authorize({ roles: ['admin'], container }), who);
      app.get('/plain/any', authorize({ container }), who);
      app.get('/plain/session-admin', sessionShield({ container }), authorize({ roles: ['admin'], container }), who);
      app.get('/plain/bot', shield(ApiKeyAuth, { container, errorFormat: 'simple' }), who);
      app.post('/plain/echo', jsonBody(), (req, res) => res.json(req.body));
      app.use(portcullisErrorHandler());
      return app;
    },
  });
  player = (await signupAndLogin(h, 'mw-player')).accessToken;
  admins.add('mw-admin');
  admin = (await signupAndLogin(h, 'mw-admin')).accessToken;
  session = (await h.request('POST', '/auth/upgrade', { token: admin, body: { token: admin } })).json.accessToken;
  admin = (await h.post('/auth/login/unamepwd', { username: 'mw-admin', password: 'correct horse battery' })).json.accessToken;
});
afterAll(() => h.close());

describe('plain middleware', () => {
  it('jwtShield() lets a JWT through and records the principal for the caller helpers', async () => {
    expect(await h.get('/plain/jwt', player)).toMatchObject({ status: 200, json: { id: expect.any(String), ip: '127.0.0.1' } });
    const refused = await h.get('/plain/jwt');
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toBe('Bearer');
  });

  it('sessionShield() takes session tokens only', async () => {
    expect((await h.get('/plain/session', session)).status).toBe(200);
    expect((await h.get('/plain/session', player)).status).toBe(401);
  });

  it('authorize() on its own authenticates with the JWT and checks roles', async () => {
    expect((await h.get('/plain/admin', admin)).status).toBe(200);
    expect((await h.get('/plain/admin', player)).status).toBe(403);
    expect((await h.get('/plain/admin')).status).toBe(401);
    expect((await h.get('/plain/any', player)).status).toBe(200);
  });

  it('authorize() after another shield checks the principal that shield established', async () => {
    expect((await h.get('/plain/session-admin', session)).status).toBe(200);
    expect((await h.get('/plain/session-admin', player)).status).toBe(401);
  });

  it('shield(AuthClass) runs a custom shield with its own error format', async () => {
    expect((await h.get('/plain/bot', 'key-ada')).json).toMatchObject({ id: 'ada-bot' });
    expect((await h.get('/plain/bot', 'key-banned')).json).toMatchObject({ error: 'forbidden' });
  });

  it('jsonBody() with portcullisErrorHandler() turns malformed JSON into 400 invalid_request', async () => {
    const answer = await h.request('POST', '/plain/echo', { raw: '{"a":' });
    expect(answer.status).toBe(400);
    expect(answer.json.error).toBe('invalid_request');
  });
});
