import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signupAndLogin, startHarness, type Harness } from './support/http-harness.js';
import { ApiController, TestAuthController } from './support/test-controllers.js';

let h: Harness;
let grace: Harness;
beforeAll(async () => {
  h = await startHarness({ controllers: [TestAuthController, ApiController] });
  grace = await startHarness({ controllers: [TestAuthController, ApiController], env: { SVC__SECURITY__REFRESH_REUSE_GRACE_SECONDS: '30' } });
});
afterAll(async () => {
  await h.close();
  await grace.close();
});

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

async function login(harness: Harness, username: string, userAgent: string) {
  const answer = await harness.request('POST', '/auth/login/unamepwd', { body: { username, password: 'correct horse battery' }, headers: { 'user-agent': userAgent } });
  expect(answer.status).toBe(200);
  return answer.json as { accessToken: string; refreshToken: string };
}

async function upgrade(harness: Harness, jwt: string) {
  const answer = await harness.request('POST', '/auth/upgrade', { body: { token: jwt }, token: jwt });
  expect(answer.status).toBe(200);
  return answer.json as { accessToken: string; refreshToken: string };
}

describe('GET /auth/sessions', () => {
  it('lists the caller\'s live logins, newest first, with where they came from and which is current', async () => {
    await signupAndLogin(h, 'inventory1');
    const phone = await login(h, 'inventory1', 'phone/1.0');
    await new Promise((resolve) => setTimeout(resolve, 5));
    const laptop = await login(h, 'inventory1', 'laptop/2.0');
    const session = await upgrade(h, laptop.accessToken);
    const answer = await h.get('/auth/sessions', session.accessToken);
    expect(answer.status).toBe(200);
    const sessions = answer.json.sessions as Array<Record<string, unknown>>;
    expect(sessions).toHaveLength(3);
    expect(Object.keys(sessions[0]!).sort()).toEqual(['createdAt', 'current', 'id', 'ip', 'refreshedAt', 'upgraded', 'userAgent']);
    expect(sessions[0]).toMatchObject({ userAgent: 'laptop/2.0', ip: '127.0.0.1', upgraded: true, current: true, createdAt: expect.stringMatching(ISO) });
    expect(sessions[1]).toMatchObject({ userAgent: 'phone/1.0', upgraded: false, current: false });
    const ids = sessions.map((s) => s.id as string);
    for (const id of ids) {
      expect(id).toMatch(/^[A-Za-z0-9_-]{22}$/);
      expect((await h.get('/api/me', id)).status).toBe(401);
      expect(answer.text).not.toContain(phone.refreshToken);
    }
    expect((await h.get('/auth/sessions', phone.accessToken)).json.sessions.find((s: { current: boolean }) => s.current).userAgent).toBe('phone/1.0');
  });

  it('answers 401 without a bearer token', async () => {
    expect((await h.get('/auth/sessions')).status).toBe(401);
  });
});

describe('DELETE /auth/sessions/{id}', () => {
  it('ends that login: its JWTs, its refresh token and its session pairs', async () => {
    await signupAndLogin(h, 'inventory2');
    const other = await login(h, 'inventory2', 'other');
    const otherSession = await upgrade(h, (await h.post('/auth/refresh', { refreshToken: other.refreshToken })).json.accessToken);
    const mine = await login(h, 'inventory2', 'mine');
    expect((await h.get('/api/session', otherSession.accessToken)).status).toBe(200);
    const listed = (await h.get('/auth/sessions', mine.accessToken)).json.sessions as Array<{ id: string; userAgent: string }>;
    const target = listed.find((s) => s.userAgent === 'other')!;
    const answer = await h.request('DELETE', `/auth/sessions/${target.id}`, { token: mine.accessToken });
    expect(answer.status).toBe(204);
    expect((await h.get('/api/session', otherSession.accessToken)).status).toBe(401);
    expect((await h.post('/auth/refresh', { refreshToken: other.refreshToken })).status).toBe(401);
    expect((await h.get('/api/me', mine.accessToken)).status).toBe(200);
    const after = (await h.get('/auth/sessions', mine.accessToken)).json.sessions as Array<{ userAgent: string }>;
    expect(after.map((s) => s.userAgent)).not.toContain('other');
  });

  it('answers 404 not_found for an id that is not the caller\'s, and ends nothing', async () => {
    await signupAndLogin(h, 'victim3');
    const victim = await login(h, 'victim3', 'victim');
    await signupAndLogin(h, 'attacker3');
    const attacker = await login(h, 'attacker3', 'attacker');
    const victimId = ((await h.get('/auth/sessions', victim.accessToken)).json.sessions as Array<{ id: string; current: boolean }>).find((s) => s.current)!.id;
    const answer = await h.request('DELETE', `/auth/sessions/${victimId}`, { token: attacker.accessToken });
    expect(answer.status).toBe(404);
    expect(answer.json).toMatchObject({ error: 'not_found' });
    expect((await h.request('DELETE', '/auth/sessions/nonexistent', { token: attacker.accessToken })).status).toBe(404);
    expect((await h.get('/api/me', victim.accessToken)).status).toBe(200);
  });
});

describe('DELETE /auth/sessions', () => {
  it('ends every login of the caller except the current one', async () => {
    await signupAndLogin(h, 'inventory4');
    const a = await login(h, 'inventory4', 'a');
    const b = await login(h, 'inventory4', 'b');
    const current = await login(h, 'inventory4', 'current');
    const session = await upgrade(h, current.accessToken);
    expect((await h.request('DELETE', '/auth/sessions', { token: session.accessToken })).status).toBe(204);
    expect((await h.get('/api/me', a.accessToken)).status).toBe(401);
    expect((await h.get('/api/me', b.accessToken)).status).toBe(401);
    expect((await h.get('/api/session', session.accessToken)).status).toBe(200);
    expect((await h.post('/auth/refresh', { refreshToken: current.refreshToken })).status).toBe(200);
    const left = (await h.get('/auth/sessions', session.accessToken)).json.sessions as Array<{ current: boolean }>;
    expect(left).toEqual([expect.objectContaining({ current: true })]);
  });
});

describe('POST /auth/refresh with refresh-reuse-grace-seconds', () => {
  it('answers a repeated refresh within the grace with the identical successor, for JWT and session refresh tokens', async () => {
    const first = await signupAndLogin(grace, 'tabs5');
    const [x, y] = await Promise.all([grace.post('/auth/refresh', { refreshToken: first.refreshToken }), grace.post('/auth/refresh', { refreshToken: first.refreshToken })]);
    expect([x.status, y.status]).toEqual([200, 200]);
    expect(y.json).toEqual(x.json);
    const session = await upgrade(grace, x.json.accessToken);
    const [s1, s2] = await Promise.all([grace.post('/auth/refresh', { refreshToken: session.refreshToken }), grace.post('/auth/refresh', { refreshToken: session.refreshToken })]);
    expect([s1.status, s2.status]).toEqual([200, 200]);
    expect(s2.json).toEqual(s1.json);
    expect((await grace.get('/api/session', s1.json.accessToken)).status).toBe(200);
  });

  it('with grace 0 a repeated session refresh is theft: 401 invalid_token and the successor ends', async () => {
    const first = await signupAndLogin(h, 'tabs6');
    const session = await upgrade(h, first.accessToken);
    const next = await h.post('/auth/refresh', { refreshToken: session.refreshToken });
    expect(next.status).toBe(200);
    expect((await h.get('/api/session', next.json.accessToken)).status).toBe(200);
    const reuse = await h.post('/auth/refresh', { refreshToken: session.refreshToken });
    expect(reuse.status).toBe(401);
    expect(reuse.json).toMatchObject({ error: 'invalid_token' });
    expect((await h.get('/api/session', next.json.accessToken)).status).toBe(401);
  });
});
