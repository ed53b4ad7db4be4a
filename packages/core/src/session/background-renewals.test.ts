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
  afterEach(() => {
    vi.useRealTimers();
    vi.restoreAllMocks();
  });

  it('gathers what is offered together into shared reads of at most 256 entries', async () => {
    vi.useFakeTimers();
    const reads = heldReads();
    const renewals = new BackgroundRenewals(reads.read);
    for (let i = 0; i < 100; i++) renewals.offer(`s${i}`);
    expect(reads.batches).toHaveLength(0); // gathered first
    for (let i = 100; i < 600; i++) renewals.offer(`s${i}`);
    await vi.advanceTimersByTimeAsync(25);
    expect(reads.batches.map((b) => b.length)).toEqual([256, 256, 88]);
    expect(new Set(reads.batches.flat()).size).toBe(600);
  });

  it('sends everything waiting with an entry offered 20 ms after the queue took its first, without waiting for the timer', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setImmediate'] });
    let now = 1_000;
    vi.spyOn(performance, 'now').mockImplementation(() => now);
    const reads = heldReads();
    const renewals = new BackgroundRenewals(reads.read);
    renewals.offer('a');
    now += 19.9;
    renewals.offer('b');
    expect(reads.batches).toHaveLength(0); // the timer has not fired: a turn that runs on
    now += 0.1;
    renewals.offer('c');
    expect(reads.batches).toEqual([['a', 'b', 'c']]);
    // The queue is empty: its timer has nothing to send, and the next entry waits anew.
    renewals.offer('d');
    expect(reads.batches).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(25);
    expect(reads.batches).toEqual([['a', 'b', 'c'], ['d']]);
  });

  it('sends a full batch at once, without waiting for a timer (which a loop turn of seconds would hold back)', async () => {
    vi.useFakeTimers();
    const reads = heldReads();
    const renewals = new BackgroundRenewals(reads.read);
    for (let i = 0; i < 600; i++) renewals.offer(`s${i}`);
    // Nothing has run but this loop: no timer fired.
    expect(reads.batches.map((b) => b.length)).toEqual([256, 256]);
    await vi.advanceTimersByTimeAsync(25);
    expect(reads.batches.map((b) => b.length)).toEqual([256, 256, 88]);
  });

  it('sends a full batch that waited for a free read as soon as a read in flight is answered, not at the next timer', async () => {
    vi.useFakeTimers();
    const reads = heldReads();
    const renewals = new BackgroundRenewals(reads.read);
    for (let i = 0; i < 64 * 256 + 256; i++) renewals.offer(`s${i}`);
    expect(reads.batches).toHaveLength(64); // the 65th batch waits: 64 reads are in flight
    await reads.finishAll(); // answers them; advances no timer
    expect(reads.batches).toHaveLength(65);
  });

  it('keeps at most 64 reads in flight and 16,384 entries waiting, and sends the rest as reads finish', async () => {
    vi.useFakeTimers();
    const reads = heldReads();
    const renewals = new BackgroundRenewals(reads.read);
    let taken = 0;
    for (let i = 0; i < 40_000; i++) if (renewals.offer(`s${i}`)) taken++;
    // 64 full reads went as they filled (64 × 256), and 16,384 more wait.
    expect(reads.batches).toHaveLength(64);
    expect(taken).toBe(2 * 16_384);
    await vi.advanceTimersByTimeAsync(25);
    expect(reads.batches).toHaveLength(64); // none more while 64 are in flight
    await reads.finishAll();
    await vi.advanceTimersByTimeAsync(25);
    expect(reads.batches.slice(64).flat()).toHaveLength(16_384);
    expect(reads.maxInFlight).toBe(64);
  });
});
