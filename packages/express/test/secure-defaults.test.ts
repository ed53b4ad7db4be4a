/**
 * Attacks on the HTTP API that worked before the fixes: several Authorization
 * headers, cacheable token responses, look-alike account names, invalid UTF-8
 * bodies, and a captcha answer for another site, action or score.
 */
import 'reflect-metadata';
import { request as httpRequest, type IncomingMessage, createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signupAndLogin, startHarness, type Harness } from './support/http-harness.js';
import { ApiController, TestAuthController } from './support/test-controllers.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ controllers: [TestAuthController, ApiController] });
});
afterAll(() => h.close());

/** A raw request, so one header can be sent several times and a body can be any bytes. */
function raw(url: string, method: string, path: string, headers: Record<string, string | string[]>, body?: Buffer): Promise<{ status: number; headers: IncomingMessage['headers']; json: any }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${url}${path}`, { method, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, json: text ? JSON.parse(text) : undefined }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('several Authorization headers', () => {
  it('are refused 401 on a shielded route, whichever of them is valid', async () => {
    const { accessToken } = await signupAndLogin(h, 'twoheads');
    expect((await h.get('/api/me', accessToken)).status).toBe(200);
    for (const authorization of [[`Bearer ${accessToken}`, 'Bearer forged'], ['Bearer forged', `Bearer ${accessToken}`], [`Bearer ${accessToken}`, `Bearer ${accessToken}`]]) {
      const answer = await raw(h.url, 'GET', '/api/me', { authorization });
      expect(answer.status).toBe(401);
      expect(answer.headers['www-authenticate']).toMatch(/^Bearer/);
    }
  });

  it('are refused 401 on an open route and on the upgrade', async () => {
    const { accessToken } = await signupAndLogin(h, 'twoheads2');
    expect((await raw(h.url, 'GET', '/api/open', { authorization: ['Bearer a', 'Bearer b'] })).status).toBe(401);
    const upgrade = await raw(h.url, 'POST', '/auth/upgrade', { authorization: [`Bearer ${accessToken}`, 'Bearer other'], 'content-type': 'application/json' }, Buffer.from(JSON.stringify({ token: accessToken })));
    expect(upgrade.status).toBe(401);
    // The JWT was not spent by the refused request.
    expect((await h.request('POST', '/auth/upgrade', { token: accessToken, body: { token: accessToken } })).status).toBe(200);
  });
});

describe('Cache-Control: no-store on token responses', () => {
  it('is sent by signup, both logins, refresh and upgrade', async () => {
    const signup = await h.post('/auth/signup', { email: 'cache@example.com', username: 'cacheme', password: 'correct horse battery' });
    const byName = await h.post('/auth/login/unamepwd', { username: 'cacheme', password: 'correct horse battery' });
    const byEmail = await h.post('/auth/login/emailpwd', { email: 'cache@example.com', password: 'correct horse battery' });
    const refreshed = await h.post('/auth/refresh', { refreshToken: byName.json.refreshToken });
    const upgraded = await h.request('POST', '/auth/upgrade', { token: refreshed.json.accessToken, body: { token: refreshed.json.accessToken } });
    const sessionRefresh = await h.post('/auth/refresh', { refreshToken: upgraded.json.refreshToken });
    for (const answer of [signup, byName, byEmail, refreshed, upgraded, sessionRefresh]) {
      expect(answer.status).toBeLessThan(300);
      expect(answer.headers.get('cache-control')).toBe('no-store');
    }
  });
});

describe('look-alike account names', () => {
  const password = 'correct horse battery';

  it('refuses zero-width, bidi and control characters and lone surrogates with 400 invalid_request', async () => {
    expect((await h.post('/auth/signup', { email: 'victim@example.com', username: 'victim', password })).status).toBe(201);
    for (const email of ['vic\u200Btim@example.com', 'victim\u200D@example.com', '\u202Evictim@example.com', 'vic\u0000tim@example.com', 'vic\uFEFFtim@example.com', 'vic\uD800tim@example.com', 'victim@exa\u2066mple.com']) {
      const answer = await h.post('/auth/signup', { email, username: `lookalike${email.length}`, password });
      expect(answer.status, JSON.stringify(email)).toBe(400);
      expect(answer.json.error).toBe('invalid_request');
      const login = await h.post('/auth/login/emailpwd', { email, password });
      expect(login.status, JSON.stringify(email)).toBe(400);
      expect(login.json.error).toBe('invalid_request');
    }
  });

  it('folds compatibility forms and combining marks (NFKC): the same name is taken', async () => {
    expect((await h.post('/auth/signup', { email: 'jos\u00E9@example.com', username: 'jose', password })).status).toBe(201);
    const combining = await h.post('/auth/signup', { email: 'jose\u0301@example.com', username: 'jose2', password });
    expect(combining.status).toBe(409);
    const fullwidth = await h.post('/auth/signup', { email: '\uFF4A\uFF4F\uFF53\u00E9@example.com', username: 'jose3', password });
    expect(fullwidth.status).toBe(409);
    // The combining form logs in to the same account.
    expect((await h.post('/auth/login/emailpwd', { email: 'jose\u0301@example.com', password })).status).toBe(200);
  });

  it('refuses a name that mixes Latin with Cyrillic or Greek letters; an all-Cyrillic name is a different account', async () => {
    expect((await h.post('/auth/signup', { email: 'paypal@example.com', username: 'paypal', password })).status).toBe(201);
    const mixed = await h.post('/auth/signup', { email: 'p\u0430ypal@example.com', username: 'paypal2', password });
    expect(mixed.status).toBe(400);
    expect(mixed.json.error).toBe('invalid_request');
    const greek = await h.post('/auth/signup', { email: 'paypal@ex\u03B1mple.com', username: 'paypal3', password });
    expect(greek.status).toBe(400);
    const cyrillic = await h.post('/auth/signup', { email: '\u0440\u0430\u0443@example.com', username: 'pay', password });
    expect(cyrillic.status).toBe(201);
  });

  it('answers 400 for a JSON body that is not valid UTF-8', async () => {
    const body = Buffer.concat([Buffer.from('{"email":"bad'), Buffer.from([0xc3, 0x28]), Buffer.from('@example.com","username":"badutf","password":"correct horse battery"}')]);
    const answer = await raw(h.url, 'POST', '/auth/signup', { 'content-type': 'application/json' }, body);
    expect(answer.status).toBe(400);
    expect(answer.json.error).toBe('invalid_request');
    const lone = await raw(h.url, 'POST', '/auth/login/unamepwd', { 'content-type': 'application/json' }, Buffer.from([...Buffer.from('{"username":"a'), 0xed, 0xa0, 0x80, ...Buffer.from('","password":"x"}')]));
    expect(lone.status).toBe(400);
  });
});

describe('captcha answers', () => {
  let provider: Server;
  let answer: Record<string, unknown> = {};
  let c: Harness;

  beforeAll(async () => {
    provider = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify(answer));
      });
    });
    await new Promise<void>((resolve) => provider.listen(0, '127.0.0.1', resolve));
    c = await startHarness({
      controllers: [TestAuthController],
      env: {
        SVC__SECURITY__CAPTCHA__PROVIDER: 'recaptcha',
        SVC__SECURITY__CAPTCHA__SECRET_KEY: 'captcha-secret',
        SVC__SECURITY__CAPTCHA__VERIFY_URL: `http://127.0.0.1:${(provider.address() as AddressInfo).port}/siteverify`,
        SVC__SECURITY__CAPTCHA__EXPECTED_HOSTNAME: 'game.example.com',
        SVC__SECURITY__CAPTCHA__EXPECTED_ACTION: 'login',
        SVC__SECURITY__CAPTCHA__MIN_SCORE: '0.5',
      },
    });
  });
  afterAll(async () => {
    await c.close();
    provider.closeAllConnections();
    await new Promise((resolve) => provider.close(resolve));
  });

  const signup = (n: number) => c.post('/auth/signup', { email: `human${n}@example.com`, username: `human${n}`, password: 'correct horse battery', captchaToken: 'token' });

  it('refuses success for a foreign hostname, a wrong or missing action, and a low or missing score', async () => {
    const good = { success: true, hostname: 'game.example.com', action: 'login', score: 0.9 };
    const bad = [
      { ...good, hostname: 'evil.example.net' },
      { ...good, hostname: undefined },
      { ...good, action: 'signup-spam' },
      { ...good, action: undefined },
      { ...good, score: 0.0 },
      { ...good, score: 0.49 },
      { ...good, score: '0.9' },
      { ...good, score: undefined },
    ];
    for (const [i, body] of bad.entries()) {
      answer = body;
      const refused = await signup(i);
      expect(refused.status, JSON.stringify(body)).toBe(400);
      expect(refused.json.error).toBe('captcha_failed');
    }
    answer = good;
    expect((await signup(99)).status).toBe(201);
    answer = { ...good, score: 0.5 };
    expect((await signup(98)).status).toBe(201);
  });
});
