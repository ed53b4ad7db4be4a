/**
 * Runs one benchmark file in its own process (started by bench/run.js with
 * `fork`) and sends its table back over IPC, so no bench shares a heap, a JIT
 * state or a libuv pool with another.
 *
 * Usage (by run.js): node bench/lib/bench-child.js <file> <rounds> <durationMs>
 */
import { pathToFileURL } from 'node:url';

const [file, rounds, durationMs] = process.argv.slice(2);

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
  const started = Date.now();
  const result = checkResult(await bench.run({ rounds: Number(rounds), durationMs: Number(durationMs) }));
  await send({ ok: true, title: bench.title ?? file, seconds: (Date.now() - started) / 1000, ...result });
  process.exit(0);
} catch (error) {
  await send({ ok: false, error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
  process.exit(1);
}
