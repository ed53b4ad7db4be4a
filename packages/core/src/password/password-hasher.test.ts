import 'reflect-metadata';
import bcrypt from 'bcrypt';
import { container } from 'tsyringe';
import { describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../config/load-config.js';
import { PORTCULLIS_CONFIG } from '../contracts/injection-tokens.js';
import { PortcullisError } from '../errors/portcullis-error.js';
import { MALFORMED_HASHES, resolveHash } from '../../test/support/bcrypt-hashes.js';
import { BcryptLimiter } from './bcrypt-limiter.js';
import { PasswordHasher } from './password-hasher.js';

type Settings = { workFactor?: number; prehash?: 'none' | 'sha384'; maxLength?: number };

function configWith({ workFactor = 4, prehash = 'none', maxLength }: Settings = {}) {
  const env: Record<string, string> = {
    SVC__SECURITY__PASSWORD__WORK_FACTOR: String(workFactor),
    SVC__SECURITY__PASSWORD__PREHASH: prehash,
  };
  if (maxLength !== undefined) {
    env.SVC__SECURITY__PASSWORD__MAX_LENGTH = String(maxLength);
    env.SVC__SECURITY__PASSWORD__MIN_LENGTH = '1';
  }
  return loadConfig({ env, tree: {} });
}

function hasher(settings: Settings = {}, limiter = new BcryptLimiter(2)) {
  return new PasswordHasher(configWith(settings), limiter);
}

describe('PasswordHasher: hash and verify', () => {
  it('verifies a password against its own hash, at the configured cost and with a fresh salt', async () => {
    const h = hasher();
    const first = await h.hash('correct horse battery staple');
    const second = await h.hash('correct horse battery staple');
    expect(first).toMatch(/^\$2b\$04\$[./A-Za-z0-9]{53}$/);
    expect(second).not.toBe(first);
    await expect(h.verify('correct horse battery staple', first)).resolves.toBe(true);
    await expect(h.verify('correct horse battery staple', second)).resolves.toBe(true);
  });

  it('refuses a wrong password', async () => {
    const h = hasher();
    const stored = await h.hash('correct horse battery staple');
    await expect(h.verify('correct horse battery stapler', stored)).resolves.toBe(false);
    await expect(h.verify('', stored)).resolves.toBe(false);
  });

  it('answers false for a null or undefined hash without throwing', async () => {
    const h = hasher();
    await expect(h.verify('whatever', null)).resolves.toBe(false);
    await expect(h.verify('whatever', undefined)).resolves.toBe(false);
  });

  it.each(MALFORMED_HASHES)('answers false for a malformed hash (%s) without throwing', async (_name, value) => {
    const h = hasher();
    const stored = await resolveHash(value);
    await expect(h.verify('someone else', stored)).resolves.toBe(false);
  });

  it('verifies a hash made at another cost at that cost, and flags it for rehash', async () => {
    const stored = await hasher({ workFactor: 5 }).hash('migrated password');
    const h = hasher({ workFactor: 4 });
    await expect(h.verify('migrated password', stored)).resolves.toBe(true);
    await expect(h.verify('wrong', stored)).resolves.toBe(false);
    expect(h.needsRehash(stored)).toBe(true);
    expect(h.needsRehash(await h.hash('fresh'))).toBe(false);
    expect(h.needsRehash(null)).toBe(true);
  });

  it('verifies hashes made by plain bcrypt, including PHP-style $2y$ and $2a$ ones', async () => {
    const h = hasher();
    const plain = await bcrypt.hash('imported', 4);
    await expect(h.verify('imported', plain)).resolves.toBe(true);
    await expect(h.verify('imported', plain.replace('$2b$', '$2y$'))).resolves.toBe(true);
    await expect(h.verify('imported', plain.replace('$2b$', '$2a$'))).resolves.toBe(true);
    await expect(h.verify('other', plain.replace('$2b$', '$2y$'))).resolves.toBe(false);
  });

  it('round-trips unicode passwords and keeps distinct spellings distinct (no normalisation)', async () => {
    const h = hasher();
    const password = 'pässwörd 🔐 密码';
    const stored = await h.hash(password);
    await expect(h.verify(password, stored)).resolves.toBe(true);
    await expect(h.verify(password.normalize('NFD'), stored)).resolves.toBe(false);
    await expect(h.verify('passwörd 🔐 密码', stored)).resolves.toBe(false);
  });

  it('counts every character after a NUL', async () => {
    for (const prehash of ['none', 'sha384'] as const) {
      const h = hasher({ prehash });
      const stored = await h.hash('abc\0def');
      await expect(h.verify('abc\0def', stored)).resolves.toBe(true);
      await expect(h.verify('abc', stored)).resolves.toBe(false);
      await expect(h.verify('abc\0xyz', stored)).resolves.toBe(false);
    }
  });
});

describe('PasswordHasher: password:prehash', () => {
  const base = 'x'.repeat(72);

  it('none: passwords sharing their first 72 bytes are the same password to bcrypt', async () => {
    const h = hasher({ prehash: 'none' });
    const stored = await h.hash(`${base}A`);
    await expect(h.verify(`${base}B`, stored)).resolves.toBe(true);
  });

  it('sha384: every byte counts, also past 72 bytes and for multi-byte characters', async () => {
    const h = hasher({ prehash: 'sha384' });
    const stored = await h.hash(`${base}A`);
    await expect(h.verify(`${base}A`, stored)).resolves.toBe(true);
    await expect(h.verify(`${base}B`, stored)).resolves.toBe(false);
    const accents = 'é'.repeat(36);
    const storedAccents = await h.hash(`${accents}1`);
    await expect(h.verify(`${accents}2`, storedAccents)).resolves.toBe(false);
  });

  it('a hash made in one mode does not verify in the other', async () => {
    const none = hasher({ prehash: 'none' });
    const sha = hasher({ prehash: 'sha384' });
    await expect(sha.verify('short one', await none.hash('short one'))).resolves.toBe(false);
    await expect(none.verify('short one', await sha.hash('short one'))).resolves.toBe(false);
  });
});

describe('PasswordHasher: invalid input', () => {
  const notStrings: unknown[] = [undefined, null, 42, {}, ['pw'], Buffer.from('pw'), Symbol('pw')];

  it.each(notStrings.map((v) => [typeof v === 'symbol' ? 'symbol' : JSON.stringify(v) ?? 'undefined', v]))(
    'refuses a non-string password (%s) with invalid_password from hash and verify',
    async (_name, value) => {
      const h = hasher();
      for (const call of [() => h.hash(value as string), () => h.verify(value as string, null)]) {
        await expect(call()).rejects.toSatisfy((e: unknown) => e instanceof PortcullisError && e.code === 'invalid_password');
      }
    },
  );

  it('refuses a password over password:max-length characters, counting code points', async () => {
    const h = hasher({ maxLength: 16 });
    const secret = 'S3cret-'.padEnd(17, 'z');
    const err = await h.hash(secret).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PortcullisError);
    expect((err as PortcullisError).code).toBe('invalid_password');
    expect((err as PortcullisError).message).not.toContain(secret);
    await expect(h.verify(secret, null)).rejects.toThrow(PortcullisError);
    await expect(h.hash('z'.repeat(16))).resolves.toMatch(/^\$2b\$/);
    await expect(h.hash('🔐'.repeat(16))).resolves.toMatch(/^\$2b\$/);
    await expect(h.hash('🔐'.repeat(17))).rejects.toThrow(PortcullisError);
  });

  it('refuses a multi-megabyte password with invalid_password under the default limit', async () => {
    const h = hasher();
    await expect(h.verify('a'.repeat(5_000_000), null)).rejects.toSatisfy(
      (e: unknown) => e instanceof PortcullisError && e.code === 'invalid_password',
    );
  });

  it('refuses a password holding a lone surrogate', async () => {
    const h = hasher();
    await expect(h.hash('pass\uD800word')).rejects.toSatisfy((e: unknown) => e instanceof PortcullisError && e.code === 'invalid_password');
  });
});

describe('PasswordHasher: prepare', () => {
  it('makes the dummy hash once per cost before any login, which gives its limiter a first time to bound waits by', async () => {
    const limiter = new BcryptLimiter(1);
    const prepared = hasher({ workFactor: 5 }, limiter);
    const hashes = vi.spyOn(bcrypt, 'hash');
    try {
      await prepared.prepare();
      await prepared.prepare();
      expect(hashes).toHaveBeenCalledTimes(1);
      const held = Array.from({ length: 2 }, () => limiter.admit(0, 'logins', () => new Promise<void>((resolve) => setTimeout(resolve, 10))));
      expect(limiter.expectedWaitMs()).toBeGreaterThan(0);
      await Promise.all(held);
      // An unknown account is then checked against that dummy: a compare, not another hash.
      expect(await prepared.verify('correct horse', null)).toBe(false);
      expect(hashes).toHaveBeenCalledTimes(1);
    } finally {
      hashes.mockRestore();
    }
  });
});

describe('PasswordHasher: dependency injection', () => {
  it('is resolved by tsyringe with the configuration and the shared limiter', async () => {
    const child = container.createChildContainer();
    child.register(PORTCULLIS_CONFIG, { useValue: configWith() });
    const h = child.resolve(PasswordHasher);
    const spy = vi.spyOn(BcryptLimiter.shared, 'compare');
    try {
      await expect(h.verify('pw', await h.hash('pw'))).resolves.toBe(true);
      expect(spy).toHaveBeenCalledTimes(1);
    } finally {
      spy.mockRestore();
    }
  });
});
