import 'reflect-metadata';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { CaptchaVerifier } from '../captcha/captcha-verifier.js';
import { loadConfig } from '../config/load-config.js';
import { OverloadedError } from '../errors/portcullis-error.js';
import { BcryptLimiter } from '../password/bcrypt-limiter.js';
import { PasswordHasher } from '../password/password-hasher.js';
import { LockoutStore } from '../store/lockout-store.js';
import { createSessionStores } from '../store/session-stores.js';
import { InMemoryAccountStore } from './in-memory-account-store.js';
import { LockedOutError } from './login-errors.js';
import { LoginService } from './login-service.js';

const config = loadConfig({
  env: { SVC__SECURITY__PASSWORD__WORK_FACTOR: '4', SVC__SECURITY__LOCKOUT__MAX_FAILURES: '3', SVC__SECURITY__LOCKOUT__LOCK_MINUTES: '2' },
  tree: {},
});
afterEach(() => vi.useRealTimers());

function makeService(captcha: CaptchaVerifier = { enabled: false, verify: async () => true }) {
  const hasher = new PasswordHasher(config);
  const accounts = new InMemoryAccountStore();
  const service = new LoginService(config, hasher, accounts, new LockoutStore(config, createSessionStores(config)), captcha);
  return { service, hasher, accounts };
}

const ada = { email: 'ada@example.com', username: 'ada', password: 'correct horse' };

describe('LoginService signup', () => {
  it('stores a bcrypt hash, never the password, and trims the names', async () => {
    const { service } = makeService();
    const account = await service.signup({ ...ada, username: ' ada ' });
    expect(account.username).toBe('ada');
    expect(account.passwordHash).toMatch(/^\$2[aby]\$04\$/);
    expect(JSON.stringify(account)).not.toContain(ada.password);
  });

  it.each([
    [{ ...ada, email: 'not-an-email' }, 'email'],
    [{ ...ada, email: 42 }, 'email'],
    [{ ...ada, username: 'a' }, 'username'],
    [{ ...ada, username: 'has space' }, 'username'],
    [{ ...ada, username: 'ada@example.com' }, 'username'],
    [{ ...ada, password: 'short' }, 'password'],
    [{ ...ada, password: 'x'.repeat(1025) }, 'password'],
    [{ ...ada, password: ['correct horse'] }, 'password'],
  ])('refuses %j with invalid_request naming the field', async (request, field) => {
    const { service } = makeService();
    const error = await service.signup(request as never).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'invalid_request' });
    expect((error as Error).message).toContain(field);
    expect((error as Error).message).not.toContain('correct horse');
  });

  it('refuses a taken username or email with conflict', async () => {
    const { service } = makeService();
    await service.signup(ada);
    await expect(service.signup({ ...ada, email: 'other@example.com', username: 'ADA' })).rejects.toMatchObject({ code: 'conflict' });
    await expect(service.signup({ ...ada, username: 'other' })).rejects.toMatchObject({ code: 'conflict' });
  });
});

describe('LoginService login', () => {
  it('logs in by email or username, case-insensitively', async () => {
    const { service } = makeService();
    const account = await service.signup(ada);
    expect((await service.loginWithEmail({ email: 'ADA@example.com', password: ada.password })).storageId).toBe(account.storageId);
    expect((await service.loginWithUsername({ username: 'Ada', password: ada.password })).storageId).toBe(account.storageId);
  });

  it('answers an unknown account and a wrong password with the same error after one bcrypt verification each', async () => {
    const { service, hasher } = makeService();
    await service.signup(ada);
    const verify = vi.spyOn(hasher, 'verify');
    const unknown = await service.loginWithUsername({ username: 'nobody', password: ada.password }).catch((e: Error) => e);
    expect(verify).toHaveBeenCalledTimes(1);
    expect(verify).toHaveBeenLastCalledWith(ada.password, null);
    const wrong = await service.loginWithUsername({ username: 'ada', password: 'wrong password' }).catch((e: Error) => e);
    expect(verify).toHaveBeenCalledTimes(2);
    expect(unknown).toMatchObject({ code: 'invalid_credentials' });
    expect(wrong).toMatchObject({ code: 'invalid_credentials' });
    expect((unknown as Error).message).toBe((wrong as Error).message);
  });

  it('locks an account name after lockout:max-failures failures, for lock-minutes, whether or not it exists', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const { service } = makeService();
    await service.signup(ada);
    for (const username of ['ada', 'ghost']) {
      for (let i = 0; i < 3; i++) await expect(service.loginWithUsername({ username, password: 'wrong password' })).rejects.toMatchObject({ code: 'invalid_credentials' });
      const locked = await service.loginWithUsername({ username, password: ada.password }).catch((e: unknown) => e);
      expect(locked).toBeInstanceOf(LockedOutError);
      expect((locked as LockedOutError).retryAfterSeconds).toBe(120);
    }
    vi.advanceTimersByTime(121_000);
    expect((await service.loginWithUsername({ username: 'ada', password: ada.password })).username).toBe('ada');
  });

  it('clears the failures of a name after a successful login', async () => {
    const { service } = makeService();
    await service.signup(ada);
    for (let i = 0; i < 2; i++) await service.loginWithEmail({ email: ada.email, password: 'nope nope' }).catch(() => undefined);
    await service.loginWithEmail({ email: ada.email, password: ada.password });
    for (let i = 0; i < 2; i++) await service.loginWithEmail({ email: ada.email, password: 'nope nope' }).catch(() => undefined);
    expect((await service.loginWithEmail({ email: ada.email, password: ada.password })).username).toBe('ada');
  });

  it('checks the captcha before the password, and refuses a bad one with captcha_failed', async () => {
    const captcha = { enabled: true, verify: vi.fn(async (token: string | undefined) => token === 'solved') };
    const { service, hasher } = makeService(captcha);
    await service.signup({ ...ada, captchaToken: 'solved' } as never);
    const verify = vi.spyOn(hasher, 'verify');
    await expect(service.loginWithUsername({ username: 'ada', password: ada.password, captchaToken: 'bot' })).rejects.toMatchObject({ code: 'captcha_failed' });
    await expect(service.loginWithUsername({ username: 'ada', password: ada.password })).rejects.toMatchObject({ code: 'captcha_failed' });
    expect(verify).not.toHaveBeenCalled();
    await expect(service.signup({ ...ada, username: 'bob', email: 'bob@example.com' })).rejects.toMatchObject({ code: 'captcha_failed' });
    expect((await service.loginWithUsername({ username: 'ada', password: ada.password, captchaToken: 'solved' }, { remoteAddress: '198.51.100.2' })).username).toBe('ada');
    expect(captcha.verify).toHaveBeenLastCalledWith('solved', '198.51.100.2');
  });

  it('refuses a missing password or an account name of the wrong type with invalid_request', async () => {
    const { service } = makeService();
    await expect(service.loginWithUsername({ username: 'ada' } as never)).rejects.toMatchObject({ code: 'invalid_request' });
    await expect(service.loginWithEmail({ email: { $ne: '' }, password: 'x' } as never)).rejects.toMatchObject({ code: 'invalid_request' });
    await expect(service.loginWithUsername({ username: 'ada', password: '' })).rejects.toMatchObject({ code: 'invalid_request' });
  });
});

describe('LoginService under a login storm', () => {
  const stormConfig = loadConfig({
    env: {
      SVC__SECURITY__PASSWORD__WORK_FACTOR: '4',
      SVC__SECURITY__PASSWORD__MAX_WAIT_SECONDS: '1',
      SVC__SECURITY__LOCKOUT__MAX_FAILURES: '2',
      SVC__SECURITY__LOCKOUT__IP_MAX_FAILURES: '2',
    },
    tree: {},
  });

  it('refuses logins and signups that would wait past password:max-wait-seconds at once, counting and creating nothing', async () => {
    // One slot, timed on a cost-10 hash (tens of milliseconds; the service's own preparation at cost 4
    // may have come first); 200 checks under way keep a newcomer waiting over a second.
    const limiter = new BcryptLimiter(1);
    const hasher = new PasswordHasher(stormConfig, limiter);
    const accounts = new InMemoryAccountStore();
    const captcha = { enabled: true, verify: vi.fn(async () => true) };
    const warnings: unknown[][] = [];
    const loggers = { create: () => ({ debug() {}, info() {}, warn: (...line: unknown[]) => warnings.push(line), error() {} }) };
    const service = new LoginService(stormConfig, hasher, accounts, new LockoutStore(stormConfig, createSessionStores(stormConfig)), captcha, loggers);
    // Ada's account is made outside this limiter, whose only timed computation is the cost-10 one.
    await accounts.create({ email: ada.email, username: ada.username, passwordHash: await new PasswordHasher(stormConfig).hash(ada.password) });
    await new Promise((resolve) => setTimeout(resolve, 50));
    await limiter.hash('timing', 10);
    const releases: Array<() => void> = [];
    const underWay = Array.from({ length: 200 }, () => limiter.admit(0, 'logins', () => new Promise<void>((resolve) => releases.push(resolve))));
    expect(limiter.expectedWaitMs()).toBeGreaterThan(1000);
    const verify = vi.spyOn(hasher, 'verify');
    const hash = vi.spyOn(hasher, 'hash');
    const origin = { remoteAddress: '198.51.100.7' };

    // More wrong-password attempts than the account and the address may fail: none is counted.
    for (let i = 0; i < 3; i++) {
      const refused = await service.loginWithUsername({ username: 'ada', password: 'wrong password', captchaToken: 'solved' }, origin).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(OverloadedError);
      expect(refused).toMatchObject({ code: 'overloaded' });
      expect((refused as OverloadedError).retryAfterSeconds).toBeGreaterThanOrEqual(1);
    }
    await expect(service.signup({ ...ada, username: 'bob', email: 'bob@example.com', captchaToken: 'solved' }, origin)).rejects.toBeInstanceOf(OverloadedError);
    expect(captcha.verify).not.toHaveBeenCalled();
    expect(verify).not.toHaveBeenCalled();
    expect(hash).not.toHaveBeenCalled();
    expect(await accounts.findByUsername('bob')).toBeUndefined();
    expect(warnings).toEqual([['bcrypt behind: logins and signups answered overloaded (see password:max-wait-seconds)', { waiting: 'logins', times: 1 }]]);

    for (const release of releases) release();
    await Promise.all(underWay);
    // Neither the account nor the address was locked by the refused attempts.
    expect((await service.loginWithUsername({ username: 'ada', password: ada.password, captchaToken: 'solved' }, origin)).username).toBe('ada');
    expect((await service.signup({ ...ada, username: 'bob', email: 'bob@example.com', captchaToken: 'solved' }, origin)).username).toBe('bob');
  });
});
