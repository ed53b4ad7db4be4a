/**
 * A fixed-count HTTP/1.1 load generator: `connections` keep-alive sockets to
 * 127.0.0.1, each sending its next GET as soon as the previous response is in,
 * until exactly `amount` responses have arrived. The clock runs from the first
 * request to the last response, so req/s is exact for short runs (autocannon's
 * `amount` mode ends on its next one-second sampling tick, which flattened
 * every fixed-count run to about `amount` per second). Small and allocation-light,
 * so one core of generator keeps ahead of one core of express.
 */
import { connect } from 'node:net';
import { performance } from 'node:perf_hooks';

const HEADER_END = Buffer.from('\r\n\r\n');
const CHUNKED_END = Buffer.from('\r\n0\r\n\r\n');

/**
 * Splits the responses out of one connection's bytes; calls `onResponse(status)` for each.
 * bench/lib/in-memory-http.js reads its socketless connection with it too.
 * @param {(status: number) => void} onResponse
 * @returns {(chunk: Buffer) => void}
 */
export function responseReader(onResponse) {
  /** @type {Buffer} */
  let pending = Buffer.alloc(0);
  return (chunk) => {
    let buffer = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    for (;;) {
      const headerEnd = buffer.indexOf(HEADER_END);
      if (headerEnd === -1) break;
      const head = buffer.toString('latin1', 0, headerEnd);
      const status = Number(head.slice(9, 12));
      const length = /\r\ncontent-length: *(\d+)/i.exec(head);
      let end;
      if (length) end = headerEnd + 4 + Number(length[1]);
      else if (/\r\ntransfer-encoding: *chunked/i.test(head)) {
        const last = buffer.indexOf(CHUNKED_END, headerEnd);
        end = last === -1 ? Infinity : last + CHUNKED_END.length;
      } else end = headerEnd + 4;
      if (end > buffer.length) break;
      buffer = buffer.subarray(end);
      onResponse(status);
    }
    pending = buffer;
  };
}

/**
 * Sends exactly `amount` GET requests for `path` over `connections` sockets;
 * resolves `{ total, seconds, p50, non2xx, errors }` (p50 in ms). Rejects after
 * `timeoutMs` (default 120 s), so a stuck server cannot hang a bench.
 *
 * @example
 * const run = await fixedCountLoad({ port, path: '/me', headers: { authorization: `Bearer ${token}` }, amount: 10_000 });
 * console.log(run.total / run.seconds, 'req/s');
 * @param {{ port: number, path: string, headers?: Record<string, string>, connections?: number, amount: number, timeoutMs?: number }} options
 * @returns {Promise<{ total: number, seconds: number, p50: number, non2xx: number, errors: number }>}
 */
export async function fixedCountLoad({ port, path, headers = {}, connections = 50, amount, timeoutMs = 120_000 }) {
  const lines = [`GET ${path} HTTP/1.1`, `Host: 127.0.0.1:${port}`, 'Connection: keep-alive', ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
  const request = Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1');
  const sockets = await Promise.all(
    Array.from({ length: Math.min(connections, amount) }, () => new Promise((resolve, reject) => {
      const socket = connect({ port, host: '127.0.0.1', noDelay: true });
      socket.once('connect', () => resolve(socket)).once('error', reject);
    })),
  );
  const latencies = new Float64Array(amount);
  let sent = 0;
  let done = 0;
  let non2xx = 0;
  let errors = 0;
  let started = 0;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => finish(new Error(`fixed-count load: ${done} of ${amount} responses after ${timeoutMs} ms`)), timeoutMs);
    let finished = false;
    /** @param {Error} [error] */
    const finish = (error) => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      const seconds = (performance.now() - started) / 1000;
      for (const socket of sockets) socket.destroy();
      if (error) return reject(error);
      const sorted = latencies.subarray(0, done).sort();
      resolve({ total: done, seconds, p50: sorted[Math.max(0, Math.ceil(done / 2) - 1)] ?? 0, non2xx, errors });
    };
    /** @param {import('node:net').Socket} socket @param {{ sentAt: number }} state */
    const send = (socket, state) => {
      if (sent >= amount) return;
      sent++;
      state.sentAt = performance.now();
      socket.write(request);
    };
    started = performance.now();
    for (const socket of sockets) {
      const state = { sentAt: 0 };
      socket.on('data', responseReader((status) => {
        latencies[done++] = performance.now() - state.sentAt;
        if (status < 200 || status > 299) non2xx++;
        if (done === amount) finish();
        else send(socket, state);
      }));
      socket.on('error', () => {
        errors++;
      });
      socket.on('close', () => {
        if (done < amount && sockets.every((s) => s.destroyed)) finish(new Error(`fixed-count load: every socket closed after ${done} of ${amount} responses`));
      });
      send(socket, state);
    }
  });
}
