import 'reflect-metadata';
import { sessionKey, TokenSessionSync, UdpKeyring, type RevocationEvent } from '@portcullis/core';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { jwtPayload, signupAndLogin, startHarness, type Harness } from './support/http-harness.js';
import { ApiController, TestAuthController, admins } from './support/test-controllers.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ controllers: [TestAuthController, ApiController] });
});
afterAll(() => h.close());
afterEach(() => vi.useRealTimers());

const JWT = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
const SESSION = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12};session$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3})?Z$/;

function expectLoginResponse(body: unknown) {
  expect(Object.keys(body as object).sort()).toEqual(['accessToken', 'refreshToken']);
  const { accessToken, refreshToken } = body as { accessToken: string; refreshToken: string };
  expect(accessToken).toMatch(JWT);
  expect(refreshToken).toMatch(JWT);
}

const udpKeyOf = (accessToken: string) => h.container.resolve(UdpKeyring).udpKeyOf(accessToken);

function expectUpgradeResponse(body: unknown) {
  expect(Object.keys(body as object).sort()).toEqual(['accessExpiration', 'accessToken', 'refreshExpiration', 'refreshToken', 'udpKey']);
  const r = body as Record<string, string>;
  expect(r.accessToken).toMatch(SESSION);
  // The session's UDP key: 32 bytes, base64url, derived from the access token's sid.
  expect(r.udpKey).toMatch(/^[A-Za-z0-9_-]{43}$/);
  expect(r.udpKey).toBe(udpKeyOf(r.accessToken!));
  expect(r.refreshToken).toMatch(SESSION);
  expect(r.accessExpiration).toMatch(ISO);
  expect(r.refreshExpiration).toMatch(ISO);
  expect(Date.parse(r.refreshExpiration!)).toBeGreaterThan(Date.parse(r.accessExpiration!));
}

function expectError(answer: { status: number; json: any; headers: Headers }, status: number, code: string) {
  expect(answer.status).toBe(status);
  expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
  expect(Object.keys(answer.json).sort()).toEqual(['error', 'message']);
  expect(answer.json.error).toBe(code);
  expect(typeof answer.json.message).toBe('string');
}

describe('POST /auth/signup', () => {
  it('answers 201 with a login response whose access token works on a shielded route', async () => {
    const signup = await h.post('/auth/signup', { email: 'alice@example.com', username: 'alice', password: 'correct horse battery' });
    expect(signup.status).toBe(201);
    expectLoginResponse(signup.json);
    const me = await h.get('/api/me', signup.json.accessToken);
    expect(me.status).toBe(200);
    expect(me.json).toMatchObject({ name: 'alice', ip: '127.0.0.1' });
    expect(jwtPayload(signup.json.accessToken)).toMatchObject({ sub: me.json.id, name: 'alice', acc: me.json.id });
  });

  it.each([
    [{ username: 'nomail', password: 'correct horse battery' }],
    [{ email: 'x@example.com', password: 'correct horse battery' }],
    [{ email: 'x@example.com', username: 'xman' }],
    [{ email: 'x@example.com', username: 'xman', password: 'short' }],
    [{ email: 'x@example.com', username: 'xman', password: 'p'.repeat(1025) }],
    [{ email: 'x@example.com', username: 7, password: 'correct horse battery' }],
    [{ email: ['x@example.com'], username: 'xman', password: 'correct horse battery' }],
    [{ email: 'x@example.com', username: 'xman', password: { $gt: '' } }],
    [{ email: 'not an email', username: 'xman', password: 'correct horse battery' }],
  ])('answers 400 invalid_request for %j', async (body) => {
    expectError(await h.post('/auth/signup', body), 400, 'invalid_request');
  });

  it('answers 409 conflict for a taken username or email, in any case', async () => {
    await signupAndLogin(h, 'bob');
    expectError(await h.post('/auth/signup', { email: 'other@example.com', username: 'BOB', password: 'correct horse battery' }), 409, 'conflict');
    expectError(await h.post('/auth/signup', { email: 'Bob@Example.com', username: 'bobby', password: 'correct horse battery' }), 409, 'conflict');
  });
});

describe.each([
  ['/auth/login/emailpwd', (name: string) => ({ email: `${name}@example.com` })],
  ['/auth/login/unamepwd', (name: string) => ({ username: name })],
])('POST %s', (path, who) => {
  const name = path.endsWith('emailpwd') ? 'carol' : 'dave';
  beforeAll(() => signupAndLogin(h, name));

  it('answers 200 with a login response', async () => {
    const login = await h.post(path, { ...who(name), password: 'correct horse battery' });
    expect(login.status).toBe(200);
    expectLoginResponse(login.json);
    expect(jwtPayload(login.json.accessToken)).toMatchObject({ name });
  });

  it('answers an unknown account and a wrong password with the same 401 invalid_credentials body', async () => {
    const unknown = await h.post(path, { ...who('nobody'), password: 'correct horse battery' });
    const wrong = await h.post(path, { ...who(name), password: 'wrong horse battery' });
    expectError(unknown, 401, 'invalid_credentials');
    expect(wrong.status).toBe(unknown.status);
    expect(wrong.text).toBe(unknown.text);
    await h.post(path, { ...who(name), password: 'correct horse battery' });
  });

  it('answers 400 invalid_request for a missing or mistyped field', async () => {
    const bodies = [{}, { password: 'correct horse battery' }, who(name), { ...who(name), password: 42 }, { ...who(name), password: null }, { ...who(name), password: '' }];
    for (const body of bodies) expectError(await h.post(path, body), 400, 'invalid_request');
    expectError(await h.post(path, { [Object.keys(who(name))[0]!]: 5, password: 'correct horse battery' }), 400, 'invalid_request');
  });
});

describe('POST /auth/refresh', () => {
  it('trades a JWT refresh token for a new login response, once', async () => {
    const login = await signupAndLogin(h, 'erin');
    const refreshed = await h.post('/auth/refresh', { refreshToken: login.refreshToken });
    expect(refreshed.status).toBe(200);
    expectLoginResponse(refreshed.json);
    expect(refreshed.json.refreshToken).not.toBe(login.refreshToken);
    expect((await h.get('/api/me', refreshed.json.accessToken)).status).toBe(200);
    expectError(await h.post('/auth/refresh', { refreshToken: login.refreshToken }), 401, 'invalid_token');
  });

  it('revokes every token of the login when a used JWT refresh token comes back', async () => {
    const login = await signupAndLogin(h, 'frank');
    const first = await h.post('/auth/refresh', { refreshToken: login.refreshToken });
    expect(first.status).toBe(200);
    expect((await h.post('/auth/refresh', { refreshToken: login.refreshToken })).status).toBe(401);
    expect((await h.get('/api/me', first.json.accessToken)).status).toBe(401);
    expectError(await h.post('/auth/refresh', { refreshToken: first.json.refreshToken }), 401, 'invalid_token');
  });

  it('reuse of a JWT refresh token also ends the login\'s original access token and a session upgraded from the login', async () => {
    const login = await signupAndLogin(h, 'fiona');
    const first = await h.post('/auth/refresh', { refreshToken: login.refreshToken });
    expect(first.status).toBe(200);
    const session = await h.request('POST', '/auth/upgrade', { token: first.json.accessToken, body: { token: first.json.accessToken } });
    expect(session.status).toBe(200);
    expect((await h.get('/api/me', login.accessToken)).status).toBe(200);
    expect((await h.get('/api/session', session.json.accessToken)).status).toBe(200);
    expectError(await h.post('/auth/refresh', { refreshToken: login.refreshToken }), 401, 'invalid_token');
    expect((await h.get('/api/me', login.accessToken)).status).toBe(401);
    expect((await h.get('/api/session', session.json.accessToken)).status).toBe(401);
    expectError(await h.post('/auth/refresh', { refreshToken: session.json.refreshToken }), 401, 'invalid_token');
  });

  it('refuses a JWT refresh token and a session refresh token past their lifetime with 401 invalid_token', async () => {
    const { refreshTokenDays, clockSkewSeconds, session: { refreshDays } } = h.config.security;
    const pairs = async (name: string) => {
      const login = await signupAndLogin(h, name);
      const second = await h.post('/auth/login/unamepwd', { username: name, password: 'correct horse battery' });
      const session = await h.request('POST', '/auth/upgrade', { token: second.json.accessToken, body: { token: second.json.accessToken } });
      expect(session.status).toBe(200);
      return { jwtRefresh: login.refreshToken, sessionRefresh: session.json.refreshToken as string };
    };
    const early = await pairs('ursula');
    const late = await pairs('ulrich');
    const start = Date.now();
    // Just before the shorter lifetime ends both still refresh, so the refusal below is the expiry's doing.
    vi.useFakeTimers({ toFake: ['Date'], now: start + Math.min(refreshTokenDays, refreshDays) * 86_400_000 - 3_600_000 });
    expect((await h.post('/auth/refresh', { refreshToken: early.jwtRefresh })).status).toBe(200);
    expect((await h.post('/auth/refresh', { refreshToken: early.sessionRefresh })).status).toBe(200);
    vi.setSystemTime(start + Math.max(refreshTokenDays, refreshDays) * 86_400_000 + clockSkewSeconds * 1000 + 60_000);
    expectError(await h.post('/auth/refresh', { refreshToken: late.jwtRefresh }), 401, 'invalid_token');
    expectError(await h.post('/auth/refresh', { refreshToken: late.sessionRefresh }), 401, 'invalid_token');
    vi.useRealTimers();
  });

  it('trades a session refresh token for a new upgrade response, once', async () => {
    const login = await signupAndLogin(h, 'gina');
    const session = await h.request('POST', '/auth/upgrade', { token: login.accessToken, body: { token: login.accessToken } });
    const refreshed = await h.post('/auth/refresh', { refreshToken: session.json.refreshToken });
    expect(refreshed.status).toBe(200);
    expectUpgradeResponse(refreshed.json);
    expect((await h.get('/api/session', refreshed.json.accessToken)).status).toBe(200);
    expectError(await h.post('/auth/refresh', { refreshToken: session.json.refreshToken }), 401, 'invalid_token');
  });

  it('refuses an access token, a JWT signed with another key, and garbage with 401 invalid_token', async () => {
    const login = await signupAndLogin(h, 'hank');
    expectError(await h.post('/auth/refresh', { refreshToken: login.accessToken }), 401, 'invalid_token');
    const [header, payload] = login.refreshToken.split('.');
    expectError(await h.post('/auth/refresh', { refreshToken: `${header}.${payload}.${'A'.repeat(43)}` }), 401, 'invalid_token');
    expectError(await h.post('/auth/refresh', { refreshToken: 'garbage' }), 401, 'invalid_token');
    expectError(await h.post('/auth/refresh', { refreshToken: '00000000-0000-4000-8000-000000000000;session' }), 401, 'invalid_token');
  });

  it('answers 400 invalid_request without a refreshToken string', async () => {
    expectError(await h.post('/auth/refresh', {}), 400, 'invalid_request');
    expectError(await h.post('/auth/refresh', { refreshToken: 12 }), 400, 'invalid_request');
  });
});

describe('POST /auth/upgrade', () => {
  const upgrade = (bearer: string | undefined, token: unknown) =>
    h.request('POST', '/auth/upgrade', { body: token === undefined ? {} : { token }, headers: bearer === undefined ? {} : { authorization: bearer } });

  it('answers 200 with an upgrade response; the JWT is then refused by shields and by a second upgrade', async () => {
    const login = await signupAndLogin(h, 'ivan');
    const session = await upgrade(`Bearer ${login.accessToken}`, login.accessToken);
    expect(session.status).toBe(200);
    expectUpgradeResponse(session.json);
    expect((await h.get('/api/session', session.json.accessToken)).json).toMatchObject({ via: 'session' });
    expect((await h.get('/api/me', login.accessToken)).status).toBe(401);
    expectError(await upgrade(`Bearer ${login.accessToken}`, login.accessToken), 401, 'invalid_token');
  });

  it('accepts the bearer scheme in any case', async () => {
    const login = await signupAndLogin(h, 'jane');
    expect((await upgrade(`bEaReR ${login.accessToken}`, login.accessToken)).status).toBe(200);
  });

  it('answers 401 invalid_token when the header is missing or differs from the body', async () => {
    const login = await signupAndLogin(h, 'kate');
    const other = await signupAndLogin(h, 'kyle');
    expectError(await upgrade(undefined, login.accessToken), 401, 'invalid_token');
    expectError(await upgrade(`Bearer ${other.accessToken}`, login.accessToken), 401, 'invalid_token');
    expect((await upgrade(`Bearer ${login.accessToken}`, login.accessToken)).status).toBe(200);
  });

  it('answers 401 invalid_token for an expired JWT, a refresh token and a tampered one', async () => {
    const login = await signupAndLogin(h, 'liam');
    expectError(await upgrade(`Bearer ${login.refreshToken}`, login.refreshToken), 401, 'invalid_token');
    const tampered = `${login.accessToken.slice(0, -2)}AA`;
    expectError(await upgrade(`Bearer ${tampered}`, tampered), 401, 'invalid_token');
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 16 * 60_000 });
    expectError(await upgrade(`Bearer ${login.accessToken}`, login.accessToken), 401, 'invalid_token');
  });

  it('answers 400 invalid_request without a token string in the body', async () => {
    const login = await signupAndLogin(h, 'mona');
    expectError(await upgrade(`Bearer ${login.accessToken}`, undefined), 400, 'invalid_request');
    expectError(await upgrade(`Bearer ${login.accessToken}`, 5), 400, 'invalid_request');
  });
});

describe('POST /auth/logout', () => {
  it('answers 204 for a session token, revokes its pair and announces it to the transports', async () => {
    const login = await signupAndLogin(h, 'nina');
    const session = await h.request('POST', '/auth/upgrade', { token: login.accessToken, body: { token: login.accessToken } });
    const events: RevocationEvent[] = [];
    const off = h.container.resolve(TokenSessionSync).onRevocation((event) => events.push(event));
    const logout = await h.request('POST', '/auth/logout', { token: session.json.accessToken });
    off();
    expect(logout.status).toBe(204);
    expect(logout.text).toBe('');
    expect(events.some((e) => e.kind === 'revoked' && e.sessionKeys.includes(sessionKey(session.json.accessToken)))).toBe(true);
    expect((await h.get('/api/session', session.json.accessToken)).status).toBe(401);
    expect((await h.post('/auth/refresh', { refreshToken: session.json.refreshToken })).status).toBe(401);
  });

  it('answers 204 for a JWT and revokes it and its refresh token', async () => {
    const login = await signupAndLogin(h, 'omar');
    expect((await h.request('POST', '/auth/logout', { token: login.accessToken })).status).toBe(204);
    expect((await h.get('/api/me', login.accessToken)).status).toBe(401);
    expect((await h.post('/auth/refresh', { refreshToken: login.refreshToken })).status).toBe(401);
  });

  it('answers 401 with WWW-Authenticate: Bearer without a valid credential', async () => {
    for (const token of [undefined, 'garbage', '00000000-0000-4000-8000-000000000000;session']) {
      const answer = await h.request('POST', '/auth/logout', { token });
      expect(answer.status).toBe(401);
      expect(answer.headers.get('www-authenticate')).toBe('Bearer');
    }
  });
});

describe('a session token pair used the wrong way round', () => {
  it('refuses the refresh token as a bearer and the access token as a refresh token, and leaves the pair working', async () => {
    const login = await signupAndLogin(h, 'sam');
    const session = await h.request('POST', '/auth/upgrade', { token: login.accessToken, body: { token: login.accessToken } });
    expect(session.status).toBe(200);
    const { accessToken, refreshToken } = session.json as { accessToken: string; refreshToken: string };
    expect((await h.get('/api/session', refreshToken)).status).toBe(401);
    const logout = await h.request('POST', '/auth/logout', { token: refreshToken });
    expect(logout.status).toBe(401);
    expect(logout.headers.get('www-authenticate')).toBe('Bearer');
    expectError(await h.post('/auth/refresh', { refreshToken: accessToken }), 401, 'invalid_token');
    expect(await h.get('/api/session', accessToken)).toMatchObject({ status: 200, json: { via: 'session' } });
    const refreshed = await h.post('/auth/refresh', { refreshToken });
    expect(refreshed.status).toBe(200);
    expectUpgradeResponse(refreshed.json);
  });
});

describe('roles through getClaimsForLogin', () => {
  it('lets an admin into @Authorize({ roles: ["admin"] }) and keeps a player out with 403', async () => {
    admins.add('pat');
    const admin = await signupAndLogin(h, 'pat');
    const player = await signupAndLogin(h, 'quinn');
    expect(await h.get('/api/admin', admin.accessToken)).toMatchObject({ status: 200, json: { admin: expect.any(String) } });
    expect((await h.get('/api/admin', player.accessToken)).status).toBe(403);
    expect((await h.get('/api/admin')).status).toBe(401);
  });

  it('keeps roles across the upgrade to a session', async () => {
    admins.add('rita');
    const admin = await signupAndLogin(h, 'rita');
    const player = await signupAndLogin(h, 'rick');
    const up = async (jwt: string) => (await h.request('POST', '/auth/upgrade', { token: jwt, body: { token: jwt } })).json.accessToken as string;
    expect((await h.get('/api/session-admin', await up(admin.accessToken))).status).toBe(200);
    expect((await h.get('/api/session-admin', await up(player.accessToken))).status).toBe(403);
  });
});
