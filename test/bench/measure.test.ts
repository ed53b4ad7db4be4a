/**
 * The benches' pairing and verdicts: how a case is ordered beside its baseline and how a
 * target is judged on the paired values of a run's rounds.
 */
import { describe, expect, it } from 'vitest';
import { runPair, verdict } from '../../bench/lib/measure.js';

describe('bench verdicts', () => {
  it('meets or misses a target only when every round does, and otherwise says the run cannot tell', () => {
    expect(verdict([0.2, 0.5, 0.9], { atMost: 1 })).toBe('met');
    expect(verdict([1.1, 1.4, 7.8], { atMost: 1 })).toBe('missed');
    expect(verdict([-0.07, 1.37, 7.84], { atMost: 1 })).toBe('missed by the median; the range straddles the target, so this run cannot tell');
    expect(verdict([0.91, 0.96, 1.01], { atLeast: 0.95 })).toBe('met by the median; the range straddles the target, so this run cannot tell');
    expect(verdict([0.96, 0.97], { atLeast: 0.95 })).toBe('met');
    expect(verdict([], { atMost: 1 })).toBe('not measured');
    expect(() => verdict([1], {})).toThrow(/one bound/);
    expect(() => verdict([1], { atMost: 1, atLeast: 0 })).toThrow(/one bound/);
  });
});

describe('runPair', () => {
  it('runs the baseline first in even rounds and the case first in odd ones', async () => {
    const order: string[] = [];
    const run = (name: string) => async () => (order.push(name), name);
    for (const round of [0, 1, 2, 3]) expect(await runPair(round, run('baseline'), run('case'))).toEqual({ baseline: 'baseline', sample: 'case' });
    expect(order).toEqual(['baseline', 'case', 'case', 'baseline', 'baseline', 'case', 'case', 'baseline']);
  });
});
