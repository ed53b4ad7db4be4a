import 'reflect-metadata';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createDatabase } from '../../../test/support/postgres-server.js';
import { startHarness, type Harness } from './support/http-harness.js';
import { ApiController, TestAuthController } from './support/test-controllers.js';

const controllers = [TestAuthController, ApiController];
const redisUrl = inject('redisUrl');
const postgresUrl = inject('postgresUrl');

describe('lockout', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ controllers, env: { SVC__SECURITY__LOCKOUT__MAX_FAILURES: '3', SVC__SECURITY__LOCKOUT__LOCK_MINUTES: '10' } });
    await h.post('/auth/signup', { email: 'locked@example.com', username: 'locked', password: 'correct horse battery' });
  });
  afterAll(() => h.close());

  it('answers 429 locked_out with Retry-After after max-failures wrong passwords, even for the right one', async () => {
    for (let i = 0; i < 3; i++) expect((await h.post('/auth/login/unamepwd', { username: 'locked', password: 'wrong password!' })).status).toBe(401);
    const answer = await h.post('/auth/login/unamepwd', { username: 'locked', password: 'correct horse battery' });
    expect(answer.status).toBe(429);
    expect(answer.json).toEqual({ error: 'locked_out', message: expect.any(String) });
    const retryAfter = Number(answer.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(590);
    expect(retryAfter).toBeLessThanOrEqual(600);
  });

  it('locks an unknown account name the same way, so lockout reveals nothing', async () => {
    for (let i = 0; i < 3; i++) expect((await h.post('/auth/login/emailpwd', { email: 'ghost@example.com', password: 'wrong password!' })).status).toBe(401);
    expect((await h.post('/auth/login/emailpwd', { email: 'ghost@example.com', password: 'wrong password!' })).status).toBe(429);
  });
});

describe('captcha', () => {
  let provider: Server;
  let h: Harness;
  const asked: string[] = [];
  beforeAll(async () => {
    provider = createServer(async (req, res) => {
      let text = '';
      for await (const chunk of req) text += chunk;
      const form = new URLSearchParams(text);
      asked.push(form.get('response') ?? '');
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ success: form.get('secret') === 'captcha-secret' && form.get('response') === 'human' }));
    });
    await new Promise<void>((resolve) => provider.listen(0, '127.0.0.1', resolve));
    const verifyUrl = `http://127.0.0.1:${(provider.address() as AddressInfo).port}/siteverify`;
    h = await startHarness({
      controllers,
      env: {
        SVC__SECURITY__CAPTCHA__PROVIDER: 'hcaptcha',
        SVC__SECURITY__CAPTCHA__SECRET_KEY: 'captcha-secret',
        SVC__SECURITY__CAPTCHA__VERIFY_URL: verifyUrl,
        SVC__SECURITY__LOCKOUT__MAX_FAILURES: '2',
      },
    });
  });
  afterAll(async () => {
    await h.close();
    provider.closeAllConnections();
    await new Promise((resolve) => provider.close(resolve));
  });

  it('signup needs a solved captcha: 400 captcha_failed without or with a wrong one, 201 with it', async () => {
    const body = { email: 'robot@example.com', username: 'robot', password: 'correct horse battery' };
    expect((await h.post('/auth/signup', body)).json).toMatchObject({ error: 'captcha_failed' });
    expect((await h.post('/auth/signup', { ...body, captchaToken: 'bot' })).status).toBe(400);
    expect((await h.post('/auth/signup', { ...body, captchaToken: 'human' })).status).toBe(201);
  });

  it('login checks the captcha before the password: a bad captcha with a wrong password is captcha_failed and counts no failure', async () => {
    for (let i = 0; i < 3; i++) {
      const answer = await h.post('/auth/login/unamepwd', { username: 'robot', password: 'wrong password!', captchaToken: 'bot' });
      expect(answer.status).toBe(400);
      expect(answer.json.error).toBe('captcha_failed');
    }
    expect((await h.post('/auth/login/unamepwd', { username: 'robot', password: 'correct horse battery', captchaToken: 'human' })).status).toBe(200);
    expect(asked.at(-1)).toBe('human');
  });
});

describe('captcha with a provider but no secret key', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ controllers, env: { SVC__SECURITY__CAPTCHA__PROVIDER: 'recaptcha', SVC__SECURITY__CAPTCHA__SECRET_KEY: '' } });
  });
  afterAll(() => h.close());

  it('is off: signup and login without a captchaToken succeed', async () => {
    expect(h.config.security.captcha.provider).toBe('recaptcha');
    const signup = await h.post('/auth/signup', { email: 'nocaptcha@example.com', username: 'nocaptcha', password: 'correct horse battery' });
    expect(signup.status).toBe(201);
    expect((await h.get('/api/me', signup.json.accessToken)).json.name).toBe('nocaptcha');
    expect((await h.post('/auth/login/unamepwd', { username: 'nocaptcha', password: 'correct horse battery' })).status).toBe(200);
  });
});

describe.each([
  ['in memory', async () => ({}) as Record<string, string>, true],
  ['on Redis', async () => ({ SVC__PERSISTENCE__CACHE__PROVIDER: 'redis', SVC__PERSISTENCE__CACHE__URL: redisUrl ?? '' }), redisUrl !== null],
  [
    'in PostgreSQL',
    async () => ({ SVC__PERSISTENCE__ACCOUNTS__PROVIDER: 'postgres', SVC__PERSISTENCE__ACCOUNTS__URL: await createDatabase(postgresUrl!) }),
    postgresUrl !== null,
  ],
])('20 concurrent signups of one username %s', (_name, env, available) => {
  it.runIf(available)('answer exactly one 201 and 409 conflict for the rest', async () => {
    const h = await startHarness({ controllers, env: await env() });
    try {
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, i) => h.post('/auth/signup', { email: `racer${i}@example.com`, username: 'racer', password: 'correct horse battery' })),
      );
      const statuses = answers.map((a) => a.status).sort();
      expect(statuses.filter((s) => s === 201)).toHaveLength(1);
      expect(statuses.filter((s) => s === 409)).toHaveLength(19);
      const winner = answers.find((a) => a.status === 201)!;
      expect((await h.get('/api/me', winner.json.accessToken)).json.name).toBe('racer');
    } finally {
      await h.close();
    }
  });
});
