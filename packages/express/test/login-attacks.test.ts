/**
 * Attacks on signup and password login over real HTTP, in memory and on a real Redis:
 * concurrent guesses on one account, lockout by strangers, guesses and signup probes
 * spread over many accounts from one address, account enumeration through signup, and
 * passwords bcrypt would truncate.
 */
import 'reflect-metadata';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PasswordHasher } from '@portcullis/core';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { startHarness, type Harness } from './support/http-harness.js';
import { ApiController, TestAuthController } from './support/test-controllers.js';

const controllers = [TestAuthController, ApiController];
const redisUrl = inject('redisUrl');
const PASSWORD = 'correct horse battery';

const providers: Array<[string, () => Record<string, string>, boolean]> = [
  ['in memory', () => ({}), true],
  [
    'on Redis',
    () => ({ SVC__PERSISTENCE__CACHE__PROVIDER: 'redis', SVC__PERSISTENCE__CACHE__URL: redisUrl ?? '', SVC__SECURITY__LOCKOUT__STORE: 'backplane' }),
    redisUrl !== null,
  ],
];

/** A request that seems to come from `address` (the harness trusts X-Forwarded-For). */
function from(h: Harness, address: string, path: string, body: unknown) {
  return h.request('POST', path, { body, headers: { 'x-forwarded-for': address } });
}

function count(statuses: number[], status: number): number {
  return statuses.filter((s) => s === status).length;
}

describe.each(providers)('password guessing %s', (_name, env, available) => {
  it.runIf(available)('40 concurrent guesses on one account get at most lockout:max-failures password checks; the rest answer 429', async () => {
    // A real bcrypt cost, so every guess is still queued for bcrypt when the last one arrives.
    const h = await startHarness({ controllers, env: { ...env(), SVC__SECURITY__PASSWORD__WORK_FACTOR: '8', SVC__SECURITY__LOCKOUT__MAX_FAILURES: '5' } });
    try {
      expect((await h.post('/auth/signup', { email: 'target@example.com', username: 'target', password: PASSWORD })).status).toBe(201);
      const guesses = Array.from({ length: 40 }, (_, i) => (i === 20 ? PASSWORD : `wrong guess ${i}`));
      const answers = await Promise.all(guesses.map((password) => h.post('/auth/login/unamepwd', { username: 'target', password })));
      const statuses = answers.map((a) => a.status);
      // 200 and 401 are the answers that needed a password check.
      expect(count(statuses, 200) + count(statuses, 401)).toBeLessThanOrEqual(5);
      expect(count(statuses, 429)).toBeGreaterThanOrEqual(35);
      for (const answer of answers.filter((a) => a.status === 429)) {
        expect(answer.json).toEqual({ error: 'locked_out', message: expect.any(String) });
        expect(Number(answer.headers.get('retry-after'))).toBeGreaterThan(0);
      }
    } finally {
      await h.close();
    }
  });

  it.runIf(available)('failed logins from one address beyond lockout:ip-max-failures answer 429 locked_out, whatever the account; other addresses go on', async () => {
    const h = await startHarness({
      controllers,
      env: { ...env(), SVC__SECURITY__LOCKOUT__IP_MAX_FAILURES: '6', SVC__SECURITY__LOCKOUT__MAX_FAILURES: '3' },
      app: { trustProxy: true },
    });
    try {
      expect((await from(h, '10.1.1.1', '/auth/signup', { email: 'spray@example.com', username: 'spray', password: PASSWORD })).status).toBe(201);
      // Two guesses on each of three accounts: no account reaches its own limit.
      const statuses: number[] = [];
      for (const name of ['alpha', 'bravo', 'charlie']) {
        for (let i = 0; i < 2; i++) statuses.push((await from(h, '10.6.6.6', '/auth/login/unamepwd', { username: name, password: 'guess!guess' })).status);
      }
      expect(statuses).toEqual([401, 401, 401, 401, 401, 401]);
      const blocked = await from(h, '10.6.6.6', '/auth/login/unamepwd', { username: 'spray', password: PASSWORD });
      expect(blocked.status).toBe(429);
      expect(blocked.json).toEqual({ error: 'locked_out', message: expect.any(String) });
      expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0);
      expect((await from(h, '10.6.6.6', '/auth/signup', { email: 'new@example.com', username: 'newcomer', password: PASSWORD })).status).toBe(429);
      expect((await from(h, '10.7.7.7', '/auth/login/unamepwd', { username: 'spray', password: PASSWORD })).status).toBe(200);
    } finally {
      await h.close();
    }
  });

  it.runIf(available)('concurrent guesses from one address spread over many accounts get at most lockout:ip-max-failures password checks', async () => {
    const h = await startHarness({
      controllers,
      env: { ...env(), SVC__SECURITY__PASSWORD__WORK_FACTOR: '8', SVC__SECURITY__LOCKOUT__IP_MAX_FAILURES: '10' },
      app: { trustProxy: true },
    });
    try {
      const answers = await Promise.all(
        Array.from({ length: 40 }, (_, i) => from(h, '10.9.9.9', '/auth/login/unamepwd', { username: `victim${i}`, password: 'guess!guess' })),
      );
      const statuses = answers.map((a) => a.status);
      expect(count(statuses, 401)).toBeLessThanOrEqual(10);
      expect(count(statuses, 429)).toBeGreaterThanOrEqual(30);
    } finally {
      await h.close();
    }
  });
});

describe.each(providers)('signup probing %s', (_name, env, available) => {
  it.runIf(available)('a taken name costs the same bcrypt work as a free one, and refused signups count toward the address limit', async () => {
    const h = await startHarness({ controllers, env: { ...env(), SVC__SECURITY__LOCKOUT__IP_MAX_FAILURES: '3' }, app: { trustProxy: true } });
    try {
      expect((await from(h, '10.2.2.2', '/auth/signup', { email: 'owner@example.com', username: 'owner', password: PASSWORD })).status).toBe(201);
      const hasher = h.container.resolve(PasswordHasher);
      const hashes = vi.spyOn(hasher, 'hash');
      const probe = (i: number) => from(h, '10.3.3.3', '/auth/signup', { email: `probe${i}@example.com`, username: 'owner', password: PASSWORD });
      const taken = await probe(0);
      expect(taken.status).toBe(409);
      expect(taken.json).toEqual({ error: 'conflict', message: expect.any(String) });
      expect(hashes).toHaveBeenCalledTimes(1);
      expect((await probe(1)).status).toBe(409);
      expect((await probe(2)).status).toBe(409);
      const fourth = await probe(3);
      expect(fourth.status).toBe(429);
      expect(fourth.json.error).toBe('locked_out');
      expect((await from(h, '10.3.3.3', '/auth/signup', { email: 'free@example.com', username: 'free-name', password: PASSWORD })).status).toBe(429);
      expect((await from(h, '10.4.4.4', '/auth/signup', { email: 'free@example.com', username: 'free-name', password: PASSWORD })).status).toBe(201);
      expect(hashes).toHaveBeenCalledTimes(4);
    } finally {
      vi.restoreAllMocks();
      await h.close();
    }
  });
});

describe('passwords bcrypt would truncate', () => {
  const h: { none?: Harness; sha384?: Harness } = {};
  beforeAll(async () => {
    h.none = await startHarness({ controllers });
    h.sha384 = await startHarness({ controllers, env: { SVC__SECURITY__PASSWORD__PREHASH: 'sha384' } });
  });
  afterAll(async () => {
    await h.none?.close();
    await h.sha384?.close();
  });

  it('with prehash none, signup refuses a password over 72 UTF-8 bytes with 400 invalid_request, and takes one of exactly 72', async () => {
    // 37 × "é" is 37 characters but 74 UTF-8 bytes: bcrypt would ignore the last two.
    const long = 'é'.repeat(37);
    const refused = await h.none!.post('/auth/signup', { email: 'long@example.com', username: 'long-pass', password: long });
    expect(refused.status).toBe(400);
    expect(refused.json).toEqual({ error: 'invalid_request', message: expect.stringMatching(/72 bytes/) });
    expect(refused.text).not.toContain(long);
    const exact = 'x'.repeat(72);
    expect((await h.none!.post('/auth/signup', { email: 'exact@example.com', username: 'exact-pass', password: exact })).status).toBe(201);
    expect((await h.none!.post('/auth/login/unamepwd', { username: 'exact-pass', password: exact })).status).toBe(200);
  });

  it('with prehash sha384 the whole of a long password counts, so it is accepted', async () => {
    const long = 'é'.repeat(50);
    expect((await h.sha384!.post('/auth/signup', { email: 'long@example.com', username: 'long-pass', password: long })).status).toBe(201);
    expect((await h.sha384!.post('/auth/login/unamepwd', { username: 'long-pass', password: `${'é'.repeat(49)}e` })).status).toBe(401);
  });
});

describe('lockout by strangers, with captcha on', () => {
  let provider: Server;
  let h: Harness;
  beforeAll(async () => {
    provider = createServer(async (req, res) => {
      let text = '';
      for await (const chunk of req) text += chunk;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ success: new URLSearchParams(text).get('response') === 'human' }));
    });
    await new Promise<void>((resolve) => provider.listen(0, '127.0.0.1', resolve));
    h = await startHarness({
      controllers,
      env: {
        SVC__SECURITY__CAPTCHA__PROVIDER: 'turnstile',
        SVC__SECURITY__CAPTCHA__SECRET_KEY: 'captcha-secret',
        SVC__SECURITY__CAPTCHA__VERIFY_URL: `http://127.0.0.1:${(provider.address() as AddressInfo).port}/siteverify`,
        SVC__SECURITY__LOCKOUT__MAX_FAILURES: '3',
      },
      app: { trustProxy: true },
    });
    expect((await h.post('/auth/signup', { email: 'owner@example.com', username: 'owner', password: PASSWORD, captchaToken: 'human' })).status).toBe(201);
  });
  afterEach(() => vi.restoreAllMocks());
  afterAll(async () => {
    await h.close();
    provider.closeAllConnections();
    await new Promise((resolve) => provider.close(resolve));
  });

  it('a stranger locks the account, and the owner still logs in with a solved captcha', async () => {
    for (let i = 0; i < 3; i++) {
      expect((await from(h, '10.5.5.5', '/auth/login/unamepwd', { username: 'owner', password: 'guess!guess', captchaToken: 'human' })).status).toBe(401);
    }
    const owner = await from(h, '10.8.8.8', '/auth/login/unamepwd', { username: 'owner', password: PASSWORD, captchaToken: 'human' });
    expect(owner.status).toBe(200);
    expect(owner.json.accessToken).toEqual(expect.any(String));
  });
});
