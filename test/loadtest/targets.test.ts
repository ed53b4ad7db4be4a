/**
 * The load test's targets: a report that misses one fails the run (loadtest/run.js), so each
 * judge must name what a live server must hold and nothing less.
 */
import { describe, expect, it } from 'vitest';
import { handlesGrew, overloadShortfall, overloadTargetsMissed, soakTargetsMissed, stormTargetsMissed, wsTargetsMissed } from '../../loadtest/lib/targets.js';

const ws = (over: Record<string, unknown> = {}) => ({ provider: 'redis', errors: 0, latencyMs: { p50: 3, p99: 12, max: 30 }, eventLoopMaxDelayMs: 20, ...over });

function phase(name: string, over: Record<string, unknown> = {}) {
  return { name, seconds: 10, sent: 100_000, answeredWithin1sShare: 1, unanswered: 0, ...over };
}

function overload(over: { phases?: ReturnType<typeof phase>[]; recoverySeconds?: number } = {}) {
  return {
    capacity: { perSecond: 10_000 },
    phases: over.phases ?? [phase('steady, 0.5× capacity'), phase('overload, 2× capacity', { sent: 200_000 }), phase('recovery, 0.5× capacity')],
    recovery: { seconds: 'recoverySeconds' in over ? over.recoverySeconds : 0.5 },
  };
}

describe('load-test targets', () => {
  it('passes a WebSocket run under 50 ms p99 and 100 ms of loop delay, and misses each at its bound', () => {
    expect(wsTargetsMissed(ws())).toEqual([]);
    expect(wsTargetsMissed(ws({ latencyMs: { p50: 3, p99: 50, max: 90 } }))).toEqual(['ws redis: p99 50.0 ms (target < 50 ms)']);
    expect(wsTargetsMissed(ws({ eventLoopMaxDelayMs: 2615 }))).toEqual(['ws redis: event-loop max delay 2615.0 ms (target < 100 ms)']);
  });

  it('judges neither the control nor the unpinned three-server fleet on latency', () => {
    expect(wsTargetsMissed(ws({ provider: 'control', latencyMs: { p99: 400 }, eventLoopMaxDelayMs: 900 }))).toEqual([]);
    expect(wsTargetsMissed(ws({ provider: 'redis-fleet', eventLoopMaxDelayMs: undefined, latencyMs: { p99: 163 } }))).toEqual([]);
    expect(wsTargetsMissed(ws({ provider: 'inmemory', eventLoopMaxDelayMs: undefined }))).toEqual(['ws inmemory: event-loop max delay not read (target < 100 ms)']);
  });

  it('misses the overload when a request waited over 1 s or got no answer, naming the phase', () => {
    expect(overloadTargetsMissed(overload(), 'overload')).toEqual([]);
    const late = overload({ phases: [phase('steady, 0.5× capacity'), phase('overload, 2× capacity', { answeredWithin1sShare: 0.319, unanswered: 12 }), phase('recovery, 0.5× capacity')] });
    expect(overloadTargetsMissed(late, 'overload-redis')).toEqual([
      "overload-redis: 31.9 % of the overload phase's requests answered within 1 s (target 100 %)",
      'overload-redis: 12 requests of the overload phase never answered (target 0)',
    ]);
  });

  it('misses a phase that sent nothing: it cannot show that every request was answered', () => {
    const empty = overload({ phases: [phase('steady, 0.5× capacity', { sent: 0, answeredWithin1sShare: Number.NaN }), phase('overload, 2× capacity', { sent: 200_000 }), phase('recovery, 0.5× capacity')] });
    expect(overloadTargetsMissed(empty, 'overload')).toEqual(['overload: the steady phase sent nothing, so it shows nothing (target: every request answered within 1 s)']);
  });

  it('misses the overload when the p99 came back after 5 s, or not for good', () => {
    expect(overloadTargetsMissed(overload({ recoverySeconds: 5 }), 'overload')).toEqual([]);
    expect(overloadTargetsMissed(overload({ recoverySeconds: 12.25 }), 'overload')).toEqual(['overload: p99 back under 50 ms only after 12.25 s (target ≤ 5 s)']);
    expect(overloadTargetsMissed(overload({ recoverySeconds: undefined }), 'overload')).toEqual(['overload: p99 not back under 50 ms for good in the recovery (target within 5 s)']);
  });

  it('says when the overload phase sent less than twice the capacity', () => {
    expect(overloadShortfall(overload(), 'overload')).toBeUndefined();
    const short = overload({ phases: [phase('steady, 0.5× capacity'), phase('overload, 2× capacity', { sent: 110_000 }), phase('recovery, 0.5× capacity')] });
    expect(overloadShortfall(short, 'overload')).toBe('overload: the overload phase sent 1.10× capacity, not 2× (the generator fell behind)');
  });

  it('misses the storm at 50 ms of loop delay and a judged soak with a growth trend', () => {
    expect(stormTargetsMissed({ eventLoop: { maxDelayMs: 17.4 } })).toEqual([]);
    expect(stormTargetsMissed({ eventLoop: { maxDelayMs: 50 } })).toEqual(['storm: event-loop max delay 50.0 ms (target < 50 ms)']);
    expect(soakTargetsMissed({ verdict: { judged: true, noGrowth: true } })).toEqual([]);
    expect(soakTargetsMissed({ verdict: { judged: false, noGrowth: false } })).toEqual([]);
    expect(soakTargetsMissed({ verdict: { judged: true, noGrowth: false } })).toHaveLength(1);
  });

  it('counts a soak\'s handle slope of 10 an hour or more only where the samples follow the line, and any handle left after every client closed', () => {
    const clean = { idle: 5, afterClose: 5 };
    // The 10-minute soak of 2026-11-29: 530 handles first and last, a line through the churn's noise.
    expect(handlesGrew({ slopePerMin: 0.2, r2: 0.04 }, clean)).toBe(false);
    expect(handlesGrew({ slopePerMin: 0.5, r2: 0.9 }, clean)).toBe(true);
    expect(handlesGrew({ slopePerMin: 10 / 60, r2: 0.5 }, clean)).toBe(true);
    expect(handlesGrew({ slopePerMin: 0.1, r2: 0.99 }, clean)).toBe(false);
    expect(handlesGrew({ slopePerMin: 0, r2: 0 }, { idle: 5, afterClose: 6 })).toBe(true);
    expect(handlesGrew({ slopePerMin: 0, r2: 0 }, {})).toBe(false);
  });
});
