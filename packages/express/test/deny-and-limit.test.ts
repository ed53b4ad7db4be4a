/**
 * Deny by default and `@RateLimit` over HTTP: `shields:fallback` guards the routes
 * that declare no shield (through the same enforcer as every shield), the `/auth`
 * routes that take no bearer stay open by declaration, the anonymous routes are
 * logged once at start-up, and a caller over a route's limit gets 429
 * `rate_limited` with `Retry-After`.
 */
import 'reflect-metadata';
import { AllowAnonymous, JwtShield, RateLimit, type Logger, type LoggerFactory } from '@portcullis/core';
import { injectable } from 'tsyringe';
import { afterEach, describe, expect, it } from 'vitest';
import { Controller, Get, Post, principalId } from '../src/index.js';
import { startHarness, type Harness } from './support/http-harness.js';
import { TestAuthController } from './support/test-controllers.js';

@injectable()
@Controller('/open')
class OpenController {
  @Get('/time') time() {
    return { now: 1 };
  }

  @AllowAnonymous
  @Get('/ping') ping() {
    return 'pong';
  }

  @JwtShield
  @RateLimit({ limit: 2, windowSeconds: 60 })
  @Post('/shot') shot(req: never) {
    return { by: principalId(req) };
  }

  @AllowAnonymous
  @RateLimit({ limit: 1, windowSeconds: 30, by: 'ip' })
  @Post('/knock') knock() {
    return 'who is there';
  }
}

function capturingLoggers(): LoggerFactory & { infos: Array<{ message: string; fields?: Record<string, unknown> }> } {
  const infos: Array<{ message: string; fields?: Record<string, unknown> }> = [];
  const none = () => undefined;
  const logger: Logger = { debug: none, warn: none, error: none, info: (message, fields) => void infos.push({ message, fields }) };
  return { infos, create: () => logger };
}

describe('deny by default and rate limits over HTTP', () => {
  let h: Harness;
  afterEach(async () => {
    await h.close();
  });

  it('with fallback session, a route without a shield needs a session token; @AllowAnonymous and the /auth routes without a bearer stay open', async () => {
    h = await startHarness({ controllers: [TestAuthController, OpenController], env: { SVC__SECURITY__SHIELDS__FALLBACK: 'session' } });
    const refused = await h.get('/open/time');
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toBe('Bearer');
    expect((await h.get('/open/ping')).json).toBe('pong');
    const signup = await h.post('/auth/signup', { email: 'ann@example.com', username: 'ann', password: 'correct horse battery' });
    expect(signup.status).toBe(201);
    expect((await h.post('/auth/login/unamepwd', { username: 'ann', password: 'correct horse battery' })).status).toBe(200);
    expect((await h.post('/auth/login/emailpwd', { email: 'ann@example.com', password: 'correct horse battery' })).status).toBe(200);
    const refreshed = await h.post('/auth/refresh', { refreshToken: signup.json.refreshToken });
    expect(refreshed.status).toBe(200);
    expect((await h.get('/open/time', refreshed.json.accessToken)).status).toBe(401);
    const upgraded = await h.post('/auth/upgrade', { token: refreshed.json.accessToken }, refreshed.json.accessToken);
    expect(upgraded.status).toBe(200);
    expect(await h.get('/open/time', upgraded.json.accessToken)).toMatchObject({ status: 200, json: { now: 1 } });
    expect((await h.post('/auth/logout', undefined, upgraded.json.accessToken)).status).toBe(204);
  });

  it('with the default fallback none, a route without a shield answers anyone', async () => {
    h = await startHarness({ controllers: [OpenController] });
    expect(await h.get('/open/time')).toMatchObject({ status: 200, json: { now: 1 } });
  });

  it('logs once, in one line, every route that answers anonymously', async () => {
    const loggers = capturingLoggers();
    h = await startHarness({ controllers: [TestAuthController, OpenController], env: { SVC__SECURITY__SHIELDS__FALLBACK: 'jwt' }, loggers });
    const announced = loggers.infos.filter((line) => line.message.startsWith('answering anonymously'));
    expect(announced).toHaveLength(1);
    expect(announced[0]!.fields).toEqual({
      anonymous: expect.arrayContaining(['POST /auth/signup', 'POST /auth/login/emailpwd', 'POST /auth/login/unamepwd', 'POST /auth/refresh', 'POST /auth/upgrade', 'GET /open/ping', 'POST /open/knock']),
      fallback: 'jwt',
    });
    expect(announced[0]!.fields!.anonymous).not.toContain('GET /open/time');
    expect(announced[0]!.fields!.anonymous).not.toContain('POST /auth/logout');
  });

  it('answers 429 rate_limited with Retry-After past the limit, per principal, with a body even in the empty error format', async () => {
    h = await startHarness({ controllers: [TestAuthController, OpenController] });
    const ann = (await h.post('/auth/signup', { email: 'ann@example.com', username: 'ann', password: 'correct horse battery' })).json.accessToken;
    const bo = (await h.post('/auth/signup', { email: 'bob@example.com', username: 'bob', password: 'correct horse battery' })).json.accessToken;
    expect((await h.post('/open/shot', {}, ann)).status).toBe(200);
    expect((await h.post('/open/shot', {}, ann)).status).toBe(200);
    const limited = await h.post('/open/shot', {}, ann);
    expect(limited.status).toBe(429);
    expect(limited.json).toEqual({ error: 'rate_limited', message: 'too many requests; retry later' });
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60).toBe(true);
    expect((await h.post('/open/shot', {}, bo)).status).toBe(200);
    // a refused credential is answered by the shield, not counted
    expect((await h.post('/open/shot', {}, 'forged')).status).toBe(401);
  });

  it('counts anonymous callers by address with by: ip (simple error format)', async () => {
    h = await startHarness({ controllers: [OpenController], env: { SVC__ERRORS__FORMAT: 'simple' } });
    expect((await h.post('/open/knock', {})).status).toBe(200);
    const limited = await h.post('/open/knock', {});
    expect(limited).toMatchObject({ status: 429, json: { error: 'rate_limited' } });
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  });
});
