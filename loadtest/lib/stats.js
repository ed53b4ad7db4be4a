/**
 * Numbers for the load-test reports: percentiles, a least-squares slope, and
 * formatting a reader can scan (20,134 msg/s, 1.92 ms, 84.1 MB).
 */

/** p50, p99 and max of latency samples in ms. */
export function latencySummary(samples) {
  if (samples.length === 0) return { count: 0, p50: Number.NaN, p99: Number.NaN, max: Number.NaN };
  const sorted = Float64Array.from(samples).sort();
  const at = (p) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
  return { count: sorted.length, p50: at(50), p99: at(99), max: sorted[sorted.length - 1] };
}

/**
 * Ordinary least squares of y on x: `{ slope, intercept, r2 }`. With x in minutes
 * the slope is growth per minute.
 */
export function linearFit(xs, ys) {
  const n = xs.length;
  if (n < 2) return { slope: 0, intercept: ys[0] ?? 0, r2: 0 };
  const mx = xs.reduce((a, b) => a + b, 0) / n;
  const my = ys.reduce((a, b) => a + b, 0) / n;
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (let i = 0; i < n; i++) {
    sxy += (xs[i] - mx) * (ys[i] - my);
    sxx += (xs[i] - mx) ** 2;
    syy += (ys[i] - my) ** 2;
  }
  const slope = sxx === 0 ? 0 : sxy / sxx;
  return { slope, intercept: my - slope * mx, r2: syy === 0 || sxx === 0 ? 0 : (sxy * sxy) / (sxx * syy) };
}

/** 20134.6 → "20,135". */
export const int = (n) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : String(n));

/** Milliseconds with sensible precision: 0.412 ms, 12.3 ms, 180 ms. */
export function ms(n) {
  if (!Number.isFinite(n)) return 'n/a';
  if (n < 1) return `${n.toFixed(3)} ms`;
  if (n < 100) return `${n.toPrecision(3)} ms`;
  return `${Math.round(n).toLocaleString('en-US')} ms`;
}

/** Bytes as MB with one decimal. */
export const mb = (bytes) => `${(bytes / 2 ** 20).toFixed(1)} MB`;

/** Signed value with unit, e.g. "+0.12 MB/min". */
export const signed = (n, digits, unit) => `${n >= 0 ? '+' : ''}${n.toFixed(digits)} ${unit}`;

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** The server's warning and error lines, counted, and the most frequent messages named with how often each happened (a throttled line counts what it stands for). */
export function formatServerLog(logged, most = 3) {
  const top = Object.entries(logged.byMessage ?? {}).sort((a, b) => b[1] - a[1]).slice(0, most);
  return `${logged.warn} warnings, ${logged.error} errors${top.length ? ` (${top.map(([m, n]) => `${m} ×${n}`).join('; ')})` : ''}`;
}
