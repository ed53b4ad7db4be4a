/**
 * Runs one benchmark file in its own process (started by bench/run.js with
 * `fork`) and sends its table back over IPC, so no bench shares a heap, a JIT
 * state or a libuv pool with another.
 *
 * Usage (by run.js): node bench/lib/bench-child.js <file> <options as JSON>
 * The options the user gave (rounds, durationMs, count, cases, pin, serverCpu,
 * generatorCpu) override the bench's `export const defaults`, which override
 * 5 rounds of 1000 ms.
 */
import { pathToFileURL } from 'node:url';

const [file, given = '{}'] = process.argv.slice(2);
const BASE = { rounds: 5, durationMs: 1000 };

function send(message) {
  return new Promise((resolve) => process.send(message, resolve));
}

function checkResult(result) {
  if (!result || !Array.isArray(result.columns) || !Array.isArray(result.rows)) {
    throw new TypeError('run() must return { columns: string[], rows: object[], notes?: string[] }');
  }
  return { columns: result.columns, rows: result.rows, notes: result.notes ?? [] };
}

try {
  const bench = await import(pathToFileURL(file).href);
  if (typeof bench.run !== 'function') throw new TypeError('a bench file must export async function run({ rounds, durationMs })');
  const options = { ...BASE, ...bench.defaults, ...JSON.parse(given) };
  const started = Date.now();
  const result = checkResult(await bench.run(options));
  await send({ ok: true, title: bench.title ?? file, seconds: (Date.now() - started) / 1000, options, ...result });
  process.exit(0);
} catch (error) {
  await send({ ok: false, error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
  process.exit(1);
}
