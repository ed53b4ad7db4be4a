/**
 * Measuring helpers shared by every benchmark: medians of several timed rounds,
 * so one noisy round on a 2-core machine does not decide a number.
 */
import { performance } from 'node:perf_hooks';

/**
 * Median of a list of numbers.
 * @param {readonly number[]} values
 * @returns {number}
 */
export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? /** @type {number} */ (sorted[mid]) : (/** @type {number} */ (sorted[mid - 1]) + /** @type {number} */ (sorted[mid])) / 2;
}

/**
 * Calls `fn` (sync or async) in a tight loop for `durationMs` per round, `rounds` times,
 * after a warm-up, and returns the median operations per second.
 * @param {() => unknown} fn
 * @param {{ durationMs?: number, rounds?: number, warmupMs?: number, batch?: number }} [options]
 * @returns {Promise<number>}
 */
export async function opsPerSecond(fn, { durationMs = 1000, rounds = 5, warmupMs = 300, batch = 64 } = {}) {
  const isAsync = fn.constructor.name === 'AsyncFunction';
  const loop = async (/** @type {number} */ ms) => {
    let ops = 0;
    const start = performance.now();
    let now = start;
    while (now - start < ms) {
      for (let i = 0; i < batch; i++) {
        if (isAsync) await fn();
        else fn();
      }
      ops += batch;
      now = performance.now();
    }
    return (ops * 1000) / (now - start);
  };
  await loop(warmupMs);
  const results = [];
  for (let r = 0; r < rounds; r++) results.push(await loop(durationMs));
  return median(results);
}

/**
 * Median wall time in milliseconds of `times` calls of an async `fn`.
 * @param {() => Promise<unknown>} fn
 * @param {{ times?: number, warmup?: number }} [options]
 * @returns {Promise<number>}
 */
export async function medianMs(fn, { times = 15, warmup = 2 } = {}) {
  for (let i = 0; i < warmup; i++) await fn();
  const samples = [];
  for (let i = 0; i < times; i++) {
    const start = performance.now();
    await fn();
    samples.push(performance.now() - start);
  }
  return median(samples);
}

/**
 * Runs one pair of a paired bench and answers both runs: the baseline first in even rounds, the
 * case first in odd ones. The second run of a pair pays for the garbage and warm-up the first
 * left behind, so a fixed order would always count that against the same side.
 *
 * @example
 * const { baseline, sample } = await runPair(round, () => measure('open'), () => measure('jwt'));
 * @template B, C
 * @param {number} round
 * @param {() => Promise<B>} runBaseline
 * @param {() => Promise<C>} runCase
 * @returns {Promise<{ baseline: B, sample: C }>}
 */
export async function runPair(round, runBaseline, runCase) {
  if (round % 2 === 1) {
    const sample = await runCase();
    return { baseline: await runBaseline(), sample };
  }
  const baseline = await runBaseline();
  return { baseline, sample: await runCase() };
}

/**
 * `a / b` rounded to two places, as the tables print ratios.
 * @param {number} a
 * @param {number} b
 */
export function ratio(a, b) {
  return Math.round((a / b) * 100) / 100;
}

/**
 * Median, smallest and largest of a list of numbers.
 * @param {readonly number[]} values
 */
export function spread(values) {
  if (values.length === 0) return { median: Number.NaN, min: Number.NaN, max: Number.NaN };
  return { median: median(values), min: Math.min(...values), max: Math.max(...values) };
}

/**
 * A median with the range it came from, as the tables print it: `0.96 (0.93–0.99)`.
 * `digits` is the number of decimals; a single value prints alone.
 *
 * @example
 * withSpread([0.95, 0.97, 0.93], 2); // '0.95 (0.93–0.97)'
 * @param {readonly number[]} values
 * @param {number} [digits]
 */
export function withSpread(values, digits = 2) {
  const { median: mid, min, max } = spread(values);
  const f = (/** @type {number} */ n) => (Object.is(Number(n.toFixed(digits)), -0) ? 0 : Number(n.toFixed(digits))).toFixed(digits);
  if (values.length === 0) return '–';
  return values.length === 1 ? f(mid) : `${f(mid)} (${f(min)}–${f(max)})`;
}

/**
 * A target's verdict on paired values, by the rule docs/performance.md states: met or missed by
 * the median, and "the run cannot tell" when the range of the rounds straddles the target.
 * `atMost` for a ceiling (µs over a baseline), `atLeast` for a floor (a ratio).
 *
 * @example
 * verdict([0.4, 0.6, 1.2], { atMost: 1 }); // 'met by the median; the range straddles the target, so this run cannot tell'
 * verdict([0.96, 0.97, 0.99], { atLeast: 0.95 }); // 'met'
 * @param {readonly number[]} values
 * @param {{ atMost?: number, atLeast?: number }} target
 * @returns {string}
 */
export function verdict(values, { atMost, atLeast }) {
  if ((atMost === undefined) === (atLeast === undefined)) throw new TypeError('verdict takes one bound: atMost or atLeast');
  if (values.length === 0) return 'not measured';
  const { median: mid, min, max } = spread(values);
  const meets = (/** @type {number} */ v) => (atMost !== undefined ? v <= atMost : v >= /** @type {number} */ (atLeast));
  if (meets(min) && meets(max)) return 'met';
  if (!meets(min) && !meets(max)) return 'missed';
  return `${meets(mid) ? 'met' : 'missed'} by the median; the range straddles the target, so this run cannot tell`;
}

const SLICES_PER_ROUND = 5;

/**
 * Measures the cases round-robin in short slices (each round is split in
 * SLICES_PER_ROUND) and keeps each case's median slice, so load from other
 * processes on a shared machine hits every case alike.
 * @param {ReadonlyArray<readonly [string, () => unknown]>} cases
 * @param {{ rounds: number, durationMs: number }} options
 * @returns {Promise<Array<[string, number]>>}
 */
export async function interleaved(cases, { rounds, durationMs }) {
  for (const [, fn] of cases) await opsPerSecond(fn, { rounds: 1, durationMs: 200, warmupMs: 100 });
  const samples = cases.map(() => /** @type {number[]} */ ([]));
  const slice = Math.max(50, Math.round(durationMs / SLICES_PER_ROUND));
  for (let r = 0; r < rounds * SLICES_PER_ROUND; r++) {
    for (const [i, [, fn]] of cases.entries()) samples[i]?.push(await opsPerSecond(fn, { rounds: 1, durationMs: slice, warmupMs: 10 }));
  }
  return cases.map(([name], i) => [name, median(samples[i] ?? [])]);
}
