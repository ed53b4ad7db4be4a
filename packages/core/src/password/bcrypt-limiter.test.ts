import { availableParallelism } from 'node:os';
import { describe, expect, it } from 'vitest';
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

  it('defaults to at least one slot and leaves a libuv pool thread free', () => {
    const n = defaultBcryptConcurrency();
    expect(n).toBeGreaterThanOrEqual(1);
    expect(n).toBeLessThanOrEqual(availableParallelism());
    if (process.env.UV_THREADPOOL_SIZE === undefined) expect(n).toBeLessThanOrEqual(3);
    expect(BcryptLimiter.shared.concurrency).toBe(n);
  });
});
