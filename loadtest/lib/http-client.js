/**
 * HTTP calls of the load generator: JSON in and out over Node's fetch, and a
 * bounded-concurrency map for doing many of them at once.
 */
import { performance } from 'node:perf_hooks';

/**
 * POSTs JSON; answers `{ status, json, ms }` and never throws for an HTTP status.
 * @param {string} url
 * @param {unknown} body
 * @param {string} [token]
 * @returns {Promise<{ status: number, json: any, ms: number }>}
 */
export async function postJson(url, body, token) {
  /** @type {Record<string, string>} */
  const headers = { 'content-type': 'application/json' };
  if (token) headers.authorization = `Bearer ${token}`;
  const started = performance.now();
  const response = await fetch(url, { method: 'POST', headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await response.text();
  let json;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: response.status, json, ms: performance.now() - started };
}

/**
 * Runs `task(item, index)` over `items` with at most `concurrency` in flight; answers the results
 * in order. After a task fails no further task starts, and the returned promise rejects with
 * that failure.
 * @template T, R
 * @param {readonly T[]} items
 * @param {number} concurrency
 * @param {(item: T, index: number) => Promise<R>} task
 * @returns {Promise<R[]>}
 */
export async function mapLimited(items, concurrency, task) {
  /** @type {R[]} */
  const results = new Array(items.length);
  let next = 0;
  let failed = false;
  const worker = async () => {
    while (next < items.length && !failed) {
      const i = next++;
      try {
        results[i] = await task(/** @type {T} */ (items[i]), i);
      } catch (error) {
        failed = true;
        throw error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  return results;
}

/**
 * Upgrades JWT access tokens to session tokens through `POST /auth/upgrade`.
 * @param {string} http
 * @param {readonly string[]} jwts
 */
export async function upgradeAll(http, jwts, concurrency = 64) {
  const answers = await mapLimited(jwts, concurrency, (jwt) => postJson(`${http}/auth/upgrade`, { token: jwt }, jwt));
  const failed = answers.filter((a) => a.status !== 200);
  if (failed.length > 0) throw new Error(`${failed.length} upgrades failed, first: ${failed[0]?.status} ${JSON.stringify(failed[0]?.json)}`);
  return answers.map((a) => a.json);
}
