import 'reflect-metadata';
import { ACCOUNT_STORE, BcryptLimiter, PasswordHasher, type AccountStore } from '@portcullis/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from './support/http-harness.js';
import { TestAuthController } from './support/test-controllers.js';

const password = 'correct horse battery';

describe('a login storm past what bcrypt can answer in password:max-wait-seconds', () => {
  let h: Harness;
  const lines: Array<{ level: string; message: string }> = [];
  const loggers = {
    create: () => ({
      debug() {},
      info() {},
      warn: (message: string) => lines.push({ level: 'warn', message }),
      error: (message: string) => lines.push({ level: 'error', message }),
    }),
  };
  beforeAll(async () => {
    // Cost 11 takes tens of milliseconds a hash on any machine, so a second of waiting is a few dozen logins.
    h = await startHarness({
      controllers: [TestAuthController],
      loggers,
      env: { SVC__SECURITY__PASSWORD__WORK_FACTOR: '11', SVC__SECURITY__PASSWORD__MAX_WAIT_SECONDS: '1', SVC__SECURITY__LOCKOUT__IP_MAX_FAILURES: '0' },
    });
    // One player per request (concurrent attempts on one name would meet its lockout first), sharing
    // one hash: the first computation the process's limiter times.
    const passwordHash = await h.container.resolve(PasswordHasher).hash(password);
    const accounts = h.container.resolve<AccountStore>(ACCOUNT_STORE);
    for (let i = 0; i <= 200; i++) await accounts.create({ email: `storm-${i}@example.com`, username: `storm-${i}`, passwordHash });
  });
  afterAll(() => h.close());

  it('answers the logins it cannot start within a second 503 overloaded with Retry-After at once, serves the rest, and is back when the storm ends', async () => {
    const answers = await Promise.all(Array.from({ length: 200 }, (_, i) => h.post('/auth/login/unamepwd', { username: `storm-${i}`, password })));
    const served = answers.filter((a) => a.status === 200);
    const refused = answers.filter((a) => a.status === 503);
    expect(answers.filter((a) => a.status !== 200 && a.status !== 503).map((a) => [a.status, a.text])).toEqual([]);
    expect(served.length + refused.length).toBe(200);
    expect(served.length).toBeGreaterThan(0);
    expect(refused.length).toBeGreaterThan(0);
    for (const answer of served) expect(typeof answer.json.accessToken).toBe('string');
    for (const answer of refused) {
      expect(answer.json).toEqual({ error: 'overloaded', message: expect.any(String) });
      expect(Number(answer.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    }
    expect(BcryptLimiter.shared.admitted).toBe(0);
    expect(BcryptLimiter.shared.queued).toBe(0);

    // The storm over, a login is served at once; the refusals were one throttled warning, no error.
    expect((await h.post('/auth/login/unamepwd', { username: 'storm-200', password })).status).toBe(200);
    expect(lines.filter((line) => line.level === 'error')).toEqual([]);
    expect(lines.filter((line) => line.message.startsWith('bcrypt behind'))).toHaveLength(1);
  });
});
