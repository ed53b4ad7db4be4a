import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHALLENGE_WRITER, type ChallengeContext } from '../src/index.js';
import { signupAndLogin, startHarness, type Harness } from './support/http-harness.js';
import { ApiController, TestAuthController } from './support/test-controllers.js';

const controllers = [TestAuthController, ApiController];

describe('default format: empty 401/403', () => {
  let h: Harness;
  let player: string;
  beforeAll(async () => {
    h = await startHarness({ controllers });
    player = (await signupAndLogin(h, 'plain')).accessToken;
  });
  afterAll(() => h.close());

  it('answers 401 with an empty body and WWW-Authenticate: Bearer', async () => {
    for (const token of [undefined, 'nonsense', `${player}x`]) {
      const answer = await h.get('/api/me', token);
      expect(answer.status).toBe(401);
      expect(answer.text).toBe('');
      expect(answer.headers.get('www-authenticate')).toBe('Bearer');
    }
  });

  it('answers 403 with an empty body and no challenge header', async () => {
    const answer = await h.get('/api/admin', player);
    expect(answer.status).toBe(403);
    expect(answer.text).toBe('');
    expect(answer.headers.get('www-authenticate')).toBeNull();
  });

  it('keeps {error, message} bodies for failures that are not bearer challenges', async () => {
    const answer = await h.post('/auth/login/unamepwd', { username: 'plain', password: 'wrong password!' });
    expect(answer.json).toEqual({ error: 'invalid_credentials', message: expect.any(String) });
  });
});

describe('svc:errors:format = simple', () => {
  let h: Harness;
  let player: string;
  beforeAll(async () => {
    h = await startHarness({ controllers, env: { SVC__ERRORS__FORMAT: 'simple' } });
    player = (await signupAndLogin(h, 'simple')).accessToken;
  });
  afterAll(() => h.close());

  it('answers 401 {error: "unauthorized", message} with WWW-Authenticate: Bearer', async () => {
    const answer = await h.get('/api/me');
    expect(answer.status).toBe(401);
    expect(answer.json).toEqual({ error: 'unauthorized', message: expect.any(String) });
    expect(answer.headers.get('www-authenticate')).toBe('Bearer');
  });

  it('answers 403 {error: "forbidden", message}', async () => {
    const answer = await h.get('/api/admin', player);
    expect(answer.status).toBe(403);
    expect(answer.json).toEqual({ error: 'forbidden', message: expect.any(String) });
  });

  it('can be chosen per app with the errorFormat option too', async () => {
    const other = await startHarness({ controllers, app: { errorFormat: 'simple' } });
    try {
      expect((await other.get('/api/me')).json).toMatchObject({ error: 'unauthorized' });
    } finally {
      await other.close();
    }
  });
});

describe('a registered challenge writer', () => {
  let h: Harness;
  let player: string;
  const seen: Array<{ code: string; status: number; credential: string | undefined; path: string }> = [];
  beforeAll(async () => {
    h = await startHarness({
      controllers,
      env: { SVC__ERRORS__FORMAT: 'simple' },
      register: (container) =>
        container.register(CHALLENGE_WRITER, {
          useValue: (ctx: ChallengeContext, status: 401 | 403) => {
            seen.push({ code: ctx.code, status, credential: ctx.auth.credential, path: ctx.req.path });
            ctx.res.status(status === 403 ? 451 : status).type('text/plain').send(`custom ${ctx.code}`);
          },
        }),
    });
    player = (await signupAndLogin(h, 'custom')).accessToken;
  });
  afterAll(() => h.close());

  it('replaces the body, receives the request context and status, and sets the status itself', async () => {
    const unauthorized = await h.get('/api/me', 'bad-token');
    expect(unauthorized.status).toBe(401);
    expect(unauthorized.text).toBe('custom unauthorized');
    const forbidden = await h.get('/api/admin', player);
    expect(forbidden.status).toBe(451);
    expect(forbidden.text).toBe('custom forbidden');
    expect(seen).toEqual([
      { code: 'unauthorized', status: 401, credential: 'bad-token', path: '/api/me' },
      { code: 'forbidden', status: 403, credential: player, path: '/api/admin' },
    ]);
  });

  it('does not handle 503 unavailable, which keeps its {error, message} body', async () => {
    const answer = await h.get('/api/broken', player);
    expect(answer.status).toBe(503);
    expect(answer.json.error).toBe('unavailable');
  });
});
