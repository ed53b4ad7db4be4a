/**
 * The load tools' bounded map: results in order, never more than the bound in flight, and no
 * task started after one failed (the benches start processes with it).
 */
import { describe, expect, it } from 'vitest';
import { mapLimited } from '../../loadtest/lib/http-client.js';

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('mapLimited', () => {
  it('answers the results in order with at most `concurrency` tasks in flight', async () => {
    let inFlight = 0;
    let most = 0;
    const results = await mapLimited([5, 1, 4, 2, 3], 2, async (n: number, i: number) => {
      most = Math.max(most, ++inFlight);
      for (let t = 0; t < n; t++) await tick();
      inFlight--;
      return n * 10 + i;
    });
    expect(results).toEqual([50, 11, 42, 23, 34]);
    expect(most).toBe(2);
  });

  it('starts no task after one failed, and rejects with that failure', async () => {
    const started: number[] = [];
    const run = mapLimited([0, 1, 2, 3, 4, 5], 2, async (n: number) => {
      started.push(n);
      await tick();
      if (n === 1) throw new Error('task 1 failed');
      await tick();
      return n;
    });
    await expect(run).rejects.toThrow('task 1 failed');
    for (let t = 0; t < 10; t++) await tick();
    expect(started).toEqual([0, 1]); // 0 was still running when 1 failed; nothing after
  });
});
