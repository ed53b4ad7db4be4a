import { availableParallelism } from 'node:os';
import { describe, expect, it } from 'vitest';
import { OverloadedError } from '../errors/portcullis-error.js';
import { BcryptLimiter, defaultBcryptConcurrency } from './bcrypt-limiter.js';

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

describe('BcryptLimiter', () => {
  it('never runs more than its concurrency at once, and queues the rest', async () => {
    const limiter = new BcryptLimiter(2);
    const gates = Array.from({ length: 6 }, deferred);
    const started: number[] = [];
    const runs = gates.map((gate, i) =>
      limiter.run(async () => {
        started.push(i);
        await gate.promise;
        return i;
      }),
    );
    await Promise.resolve();
    expect(started).toEqual([0, 1]);
    expect(limiter.inFlight).toBe(2);
    expect(limiter.queued).toBe(4);

    gates[0]!.resolve();
    await runs[0];
    await new Promise((r) => setImmediate(r));
    expect(started).toEqual([0, 1, 2]);
    expect(limiter.inFlight).toBe(2);

    for (const gate of gates) gate.resolve();
    expect(await Promise.all(runs)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(started).toEqual([0, 1, 2, 3, 4, 5]);
    expect(limiter.maxObserved).toBe(2);
    expect(limiter.inFlight).toBe(0);
    expect(limiter.queued).toBe(0);
  });

  it('caps real bcrypt work under a storm of hashes and compares', async () => {
    const limiter = new BcryptLimiter(2);
    const hash = await limiter.hash('storm', 4);
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => limiter.compare(i % 2 ? 'storm' : 'nope', hash)));
    expect(results.filter(Boolean)).toHaveLength(6);
    expect(limiter.maxObserved).toBe(2);
    expect(limiter.inFlight).toBe(0);
  });

  it('frees the slot when a task fails', async () => {
    const limiter = new BcryptLimiter(1);
    await expect(limiter.run(() => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(limiter.inFlight).toBe(0);
    await expect(limiter.run(async () => 'next')).resolves.toBe('next');
  });

  it('refuses a concurrency that is not a positive integer', () => {
    expect(() => new BcryptLimiter(0)).toThrow(RangeError);
    expect(() => new BcryptLimiter(1.5)).toThrow(RangeError);
  });

  it('defaults to one slot per core but one (at least one), leaving a libuv pool thread free', () => {
    // The event loop keeps a core: with bcrypt on every core a login storm stalled it for 100 ms.
    expect([1, 2, 3, 4, 8].map((cores) => defaultBcryptConcurrency(cores, {}))).toEqual([1, 1, 2, 3, 3]);
    expect(defaultBcryptConcurrency(8, { UV_THREADPOOL_SIZE: '16' })).toBe(7);
    expect(defaultBcryptConcurrency(8, { UV_THREADPOOL_SIZE: '2' })).toBe(1);
    expect(BcryptLimiter.shared.concurrency).toBe(defaultBcryptConcurrency(availableParallelism(), process.env));
  });

  describe('admit', () => {
    /** A limiter of `concurrency` slots whose mean computation has been timed (one real bcrypt hash). */
    async function timed(concurrency: number): Promise<BcryptLimiter> {
      const limiter = new BcryptLimiter(concurrency);
      await limiter.hash('timed', 6);
      return limiter;
    }
    /** `n` admitted checks held open until `release`. */
    function hold(limiter: BcryptLimiter, n: number) {
      const holds = Array.from({ length: n }, deferred);
      const admitted = holds.map((h) => limiter.admit(0, 'logins', () => h.promise));
      return { release: async () => (holds.forEach((h) => h.resolve()), await Promise.all(admitted)) };
    }

    it('refuses at once, without running it, a check that would wait past the bound, and admits again once those ahead finish', async () => {
      const limiter = await timed(1);
      expect(limiter.expectedWaitMs()).toBe(0);
      const ahead = hold(limiter, 3);
      expect(limiter.admitted).toBe(3);
      const waitMs = limiter.expectedWaitMs();
      expect(waitMs).toBeGreaterThan(0);
      let ran = false;
      const refusal = await limiter
        .admit(waitMs / 2, 'logins', async () => {
          ran = true;
        })
        .catch((error: unknown) => error);
      expect(refusal).toBeInstanceOf(OverloadedError);
      expect(refusal).toMatchObject({ code: 'overloaded', retryAfterSeconds: 1, message: 'too many logins waiting; try again in 1 s' });
      expect(ran).toBe(false);
      expect(limiter.admitted).toBe(3);
      // Within the bound: admitted.
      await expect(limiter.admit(waitMs, 'logins', async () => 'in')).resolves.toBe('in');

      await ahead.release();
      expect(limiter.admitted).toBe(0);
      await expect(limiter.admit(waitMs / 2, 'logins', async () => 'in')).resolves.toBe('in');
    });

    it('counts the checks ahead per slot: on two slots, two and three ahead wait one computation, four wait two', async () => {
      const limiter = await timed(2);
      const two = hold(limiter, 2);
      const oneRound = limiter.expectedWaitMs();
      expect(oneRound).toBeGreaterThan(0);
      const third = hold(limiter, 1);
      expect(limiter.expectedWaitMs()).toBe(oneRound);
      const fourth = hold(limiter, 1);
      expect(limiter.expectedWaitMs()).toBe(2 * oneRound);
      await Promise.all([two.release(), third.release(), fourth.release()]);
    });

    it('counts bcrypt work running and queued outside any admitted check', async () => {
      const limiter = await timed(1);
      const hashes = Array.from({ length: 3 }, () => limiter.hash('not admitted', 6));
      expect(limiter.admitted).toBe(0);
      expect(limiter.inFlight + limiter.queued).toBe(3);
      expect(limiter.expectedWaitMs()).toBeGreaterThan(0);
      await Promise.all(hashes);
      expect(limiter.expectedWaitMs()).toBe(0);
    });

    it('ends a check\'s admission when it fails, and never refuses with a bound of 0', async () => {
      const limiter = await timed(1);
      await expect(limiter.admit(1, 'logins', () => Promise.reject(new Error('store down')))).rejects.toThrow('store down');
      expect(limiter.admitted).toBe(0);
      const ahead = hold(limiter, 10);
      expect(limiter.expectedWaitMs()).toBeGreaterThan(0);
      await expect(limiter.admit(0, 'logins', async () => 'in')).resolves.toBe('in');
      await ahead.release();
    });

    it('admits everything until one computation has been timed: there is no wait to estimate yet', async () => {
      const limiter = new BcryptLimiter(1);
      const ahead = hold(limiter, 50);
      expect(limiter.expectedWaitMs()).toBe(0);
      await expect(limiter.admit(1, 'logins', async () => 'in')).resolves.toBe('in');
      await ahead.release();
    });
  });
});
