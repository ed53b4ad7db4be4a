import { afterEach, describe, expect, it, vi } from 'vitest';
import { BackgroundRenewals } from './background-renewals.js';

/** A batch reader whose reads stay in flight until `finishAll`. */
function heldReads() {
  const batches: string[][] = [];
  const pending: Array<() => void> = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const read = (keys: string[]) => {
    batches.push(keys);
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    return new Promise<void>((resolve) => pending.push(() => (inFlight--, resolve())));
  };
  return {
    read,
    batches,
    get maxInFlight() {
      return maxInFlight;
    },
    finishAll: async () => {
      for (const finish of pending.splice(0)) finish();
      await vi.advanceTimersByTimeAsync(0);
    },
  };
}

describe('BackgroundRenewals', () => {
  afterEach(() => vi.useRealTimers());

  it('gathers what is offered together into shared reads of at most 256 entries', async () => {
    vi.useFakeTimers();
    const reads = heldReads();
    const renewals = new BackgroundRenewals(reads.read);
    for (let i = 0; i < 600; i++) renewals.offer(`s${i}`);
    expect(reads.batches).toHaveLength(0); // gathered first
    await vi.advanceTimersByTimeAsync(25);
    expect(reads.batches.map((b) => b.length)).toEqual([256, 256, 88]);
    expect(new Set(reads.batches.flat()).size).toBe(600);
  });

  it('keeps at most 16,384 entries waiting and 64 reads in flight, and sends the rest as reads finish', async () => {
    vi.useFakeTimers();
    const reads = heldReads();
    const renewals = new BackgroundRenewals(reads.read);
    let taken = 0;
    for (let i = 0; i < 20_000; i++) if (renewals.offer(`s${i}`)) taken++;
    expect(taken).toBe(16_384);
    await vi.advanceTimersByTimeAsync(25);
    expect(reads.batches).toHaveLength(64); // 64 × 256: every waiting entry, in as many reads as may be in flight
    for (let i = 0; i < 1_000; i++) renewals.offer(`late${i}`);
    await vi.advanceTimersByTimeAsync(25);
    expect(reads.batches).toHaveLength(64); // none more while 64 are in flight
    await reads.finishAll();
    await vi.advanceTimersByTimeAsync(25);
    expect(reads.batches.slice(64).flat()).toHaveLength(1_000);
    expect(reads.maxInFlight).toBe(64);
  });
});
