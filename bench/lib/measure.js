/**
 * Measuring helpers shared by every benchmark: medians of several timed rounds,
 * so one noisy round on a 2-core machine does not decide a number.
 */
import { performance } from 'node:perf_hooks';

/** Median of a list of numbers. */
export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/**
 * Calls `fn` (sync or async) in a tight loop for `durationMs` per round, `rounds` times,
 * after a warm-up, and returns the median operations per second.
 */
export async function opsPerSecond(fn, { durationMs = 1000, rounds = 5, warmupMs = 300, batch = 64 } = {}) {
  const isAsync = fn.constructor.name === 'AsyncFunction';
  const loop = async (ms) => {
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

/** Median wall time in milliseconds of `times` calls of an async `fn`. */
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

/** `a / b` rounded to two places, as the tables print ratios. */
export function ratio(a, b) {
  return Math.round((a / b) * 100) / 100;
}
