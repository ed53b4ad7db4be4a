import { randomInt } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { UDP_REPLAY_WINDOW, UdpReplayWindow } from './udp-replay-window.js';

const accepts = (window: UdpReplayWindow, seqs: number[]) => seqs.map((seq) => window.accept(BigInt(seq)));

describe('UdpReplayWindow', () => {
  it('accepts any first number, then each new number once: a replay is refused', () => {
    const window = new UdpReplayWindow();
    expect(window.newest).toBeUndefined();
    expect(accepts(window, [1_000, 1_001, 1_001, 1_000, 1_002])).toEqual([true, true, false, false, true]);
    expect(window.newest).toBe(1_002n);
  });

  it('accepts numbers that arrive out of order inside the 64 newest, each once', () => {
    const window = new UdpReplayWindow();
    expect(accepts(window, [100, 90, 95, 37, 99, 90, 37])).toEqual([true, true, true, true, true, false, false]);
  });

  it('refuses numbers older than the 64 newest, seen or not', () => {
    const window = new UdpReplayWindow();
    expect(UDP_REPLAY_WINDOW).toBe(64);
    expect(accepts(window, [200, 200 - 63, 200 - 64, 200 - 65, 5])).toEqual([true, true, false, false, false]);
  });

  it('slides: a jump forward forgets what fell out and keeps what is still inside', () => {
    const window = new UdpReplayWindow();
    accepts(window, [10, 11, 12]);
    expect(accepts(window, [40])).toEqual([true]);
    expect(accepts(window, [12, 11, 13])).toEqual([false, false, true]);
    expect(accepts(window, [40 + 64])).toEqual([true]);
    expect(accepts(window, [41, 40 + 63, 40 + 63])).toEqual([true, true, false]);
    expect(accepts(window, [40])).toEqual([false]);
    expect(accepts(window, [10_000_000])).toEqual([true]);
    expect(accepts(window, [40 + 64, 10_000_000 - 1])).toEqual([false, true]);
  });

  it('handles the whole unsigned 64-bit range', () => {
    const window = new UdpReplayWindow();
    const max = 0xffff_ffff_ffff_ffffn;
    expect(window.accept(0n)).toBe(true);
    expect(window.accept(max)).toBe(true);
    expect(window.accept(max - 1n)).toBe(true);
    expect(window.accept(max)).toBe(false);
    expect(window.accept(0n)).toBe(false);
  });

  it('decides as a plain 64-bit model across the 32-bit boundary and at the top of the range, by accept and acceptSplit alike', () => {
    for (const base of [0n, 0xffff_ff00n, 0x1_ffff_ffc0n, 0xffff_ffff_ffff_ff00n]) {
      const model = { top: -1n, seen: new Set<bigint>() };
      const byBigInt = new UdpReplayWindow();
      const bySplit = new UdpReplayWindow();
      for (let i = 0; i < 3_000; i++) {
        const step = randomInt(0, 10) === 0 ? BigInt(randomInt(0, 200)) : BigInt(randomInt(0, 3));
        const back = randomInt(0, 2) === 0;
        const around = model.top < 0n ? base : model.top;
        let seq = back ? around - BigInt(randomInt(0, 80)) : around + step;
        if (seq < 0n) seq = 0n;
        if (seq > 0xffff_ffff_ffff_ffffn) seq = 0xffff_ffff_ffff_ffffn;
        const fresh = seq > model.top || (model.top - seq < 64n && !model.seen.has(seq));
        if (fresh) {
          model.seen.add(seq);
          if (seq > model.top) model.top = seq;
        }
        expect(byBigInt.accept(seq), `seq ${seq}`).toBe(fresh);
        expect(bySplit.acceptSplit(Number(seq >> 32n), Number(seq & 0xffff_ffffn)), `seq ${seq}`).toBe(fresh);
      }
      expect(byBigInt.newest).toBe(model.top);
    }
  });

  it('refuses a number outside the unsigned 64-bit range', () => {
    expect(() => new UdpReplayWindow().accept(-1n)).toThrow(RangeError);
    expect(() => new UdpReplayWindow().accept(1n << 64n)).toThrow(RangeError);
  });
});
