import { describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../config/load-config.js';
import { costOf, MALFORMED_HASHES, resolveHash } from '../../test/support/bcrypt-hashes.js';
import { BcryptLimiter } from './bcrypt-limiter.js';
import { PasswordHasher } from './password-hasher.js';

function configWith(workFactor: number) {
  return loadConfig({ env: { SVC__SECURITY__PASSWORD__WORK_FACTOR: String(workFactor) }, tree: {} });
}

describe('PasswordHasher: an unknown account costs what a wrong password costs', () => {
  function countedHasher(workFactor: number) {
    const limiter = new BcryptLimiter(2);
    const hashSpy = vi.spyOn(limiter, 'hash');
    const compareSpy = vi.spyOn(limiter, 'compare');
    const h = new PasswordHasher(configWith(workFactor), limiter);
    const bcryptCosts = () => [
      ...hashSpy.mock.calls.map(([, rounds]) => rounds),
      ...compareSpy.mock.calls.map(([, hash]) => costOf(hash)),
    ];
    const reset = () => {
      hashSpy.mockClear();
      compareSpy.mockClear();
    };
    return { h, compareSpy, bcryptCosts, reset };
  }

  it('spends exactly one bcrypt computation at the configured cost for a real hash', async () => {
    const { h, compareSpy, bcryptCosts, reset } = countedHasher(5);
    const stored = await h.hash('pw');
    reset();
    await h.verify('wrong', stored);
    expect(bcryptCosts()).toEqual([5]);
    expect(compareSpy).toHaveBeenCalledWith(expect.any(String), stored);
  });

  it('spends exactly one bcrypt computation at the configured cost for a null hash, first time and after', async () => {
    const { h, compareSpy, bcryptCosts, reset } = countedHasher(5);
    for (let i = 0; i < 3; i++) {
      reset();
      await expect(h.verify('whatever', null)).resolves.toBe(false);
      expect(bcryptCosts()).toEqual([5]);
    }
    expect(compareSpy).toHaveBeenCalledTimes(1);
  });

  it.each(MALFORMED_HASHES)('spends exactly one bcrypt computation at the configured cost for a malformed hash (%s)', async (_name, value) => {
    const { h, bcryptCosts, reset } = countedHasher(5);
    const stored = await resolveHash(value);
    await h.verify('whatever', null);
    reset();
    await expect(h.verify('whatever', stored)).resolves.toBe(false);
    expect(bcryptCosts()).toEqual([5]);
  });

  it('runs its bcrypt work through the limiter, never above its cap', async () => {
    const limiter = new BcryptLimiter(1);
    const h = new PasswordHasher(configWith(4), limiter);
    const stored = await h.hash('pw');
    const answers = await Promise.all([
      h.verify('pw', stored),
      h.verify('nope', stored),
      h.verify('pw', null),
      h.verify('pw', 'garbage'),
      h.hash('another'),
    ]);
    expect(answers.slice(0, 4)).toEqual([true, false, false, false]);
    expect(limiter.maxObserved).toBe(1);
  });
});
