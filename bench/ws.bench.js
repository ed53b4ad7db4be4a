/**
 * WebSocket round trips through @portcullis/ws beside plain `ws`, in one run:
 * raw `ws` echo, JSON echo, our unshielded gate, our @SessionShield gate on the
 * in-memory store and on Redis (near cache), with 1 and 50 clients (each client
 * keeps one request in flight). The server runs in a child process, so its CPU
 * per message (process.cpuUsage over the window ÷ messages) excludes the
 * clients. Also: server memory per idle authenticated connection at 5,000.
 */
import { fork } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';
import { median } from './lib/measure.js';
import { findRedisServer, startRedis } from './lib/redis.js';

export const title = 'WebSocket round trips: raw ws, JSON echo, our gates (server in a child process)';

const here = dirname(fileURLToPath(import.meta.url));
const relative = (a, b) => Number((a / b).toPrecision(3));
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const PAYLOAD = { x: 12, y: 34 };

function startServer(env) {
  const child = fork(join(here, 'lib', 'ws-bench-server.js'), [], { execArgv: ['--expose-gc'], env: { ...process.env, ...env }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  let seq = 0;
  const pending = new Map();
  let ready;
  const started = new Promise((resolve, reject) => {
    ready = resolve;
    child.once('exit', (code) => reject(new Error(`bench server exited with ${code}`)));
  });
  child.on('message', (m) => {
    if (m.ready) return ready(m.ports);
    const waiter = pending.get(m.seq);
    pending.delete(m.seq);
    if (m.ok) waiter.resolve(m.value);
    else waiter.reject(new Error(m.error));
  });
  const call = (cmd, args) => new Promise((resolve, reject) => {
    pending.set(++seq, { resolve, reject });
    child.send({ seq, cmd, args });
  });
  return { started, call, child };
}

async function openClients(url, tokens, count) {
  const sockets = [];
  for (let i = 0; i < count; i += 200) {
    const batch = Array.from({ length: Math.min(200, count - i) }, (_, j) => {
      const token = tokens?.[(i + j) % tokens.length];
      const ws = new WebSocket(url, { headers: token ? { Authorization: `Bearer ${token}` } : {}, perMessageDeflate: false });
      return new Promise((resolve, reject) => {
        ws.once('open', () => resolve(ws));
        ws.once('error', reject);
      });
    });
    sockets.push(...(await Promise.all(batch)));
  }
  return sockets;
}

/**
 * Closed loop: every client sends its next message when the previous reply
 * arrives. `stop()` ends the loop and resolves once every in-flight reply is in.
 */
function drive(sockets, message) {
  const state = { count: 0, running: true, inFlight: 0 };
  let drained = () => {};
  const listeners = sockets.map((ws) => {
    let id = 0;
    const send = () => {
      state.inFlight++;
      ws.send(message(++id));
    };
    const onMessage = () => {
      state.inFlight--;
      state.count++;
      if (state.running) send();
      else if (state.inFlight === 0) drained();
    };
    ws.on('message', onMessage);
    send();
    return [ws, onMessage];
  });
  state.stop = async () => {
    state.running = false;
    if (state.inFlight > 0) await Promise.race([new Promise((resolve) => (drained = resolve)), sleep(1000)]);
    for (const [ws, onMessage] of listeners) ws.off('message', onMessage);
  };
  return state;
}

/** One measured window of one scenario: messages per second and server CPU µs per message. */
async function measureWindow(server, sockets, message, durationMs) {
  const state = drive(sockets, message);
  await sleep(Math.min(200, durationMs / 4));
  await server.call('cpu-start');
  const before = state.count;
  const start = performance.now();
  await sleep(durationMs);
  const messages = state.count - before;
  const elapsed = performance.now() - start;
  const micros = await server.call('cpu-stop');
  await state.stop();
  return { rate: (messages * 1000) / elapsed, cpu: micros / messages };
}

/**
 * Every scenario's connections stay open for the whole client count; rounds
 * visit the scenarios in rotating order, so drift on a shared machine spreads
 * over all of them instead of favouring whichever ran first.
 */
async function measureAll(server, scenarios, clients, { rounds, durationMs }) {
  const prepared = [];
  for (const s of scenarios) prepared.push({ s, sockets: await openClients(s.url, s.tokens, clients), rates: [], cpu: [] });
  for (let r = 0; r < rounds; r++) {
    for (let k = 0; k < prepared.length; k++) {
      const p = prepared[(k + r) % prepared.length];
      const window = await measureWindow(server, p.sockets, p.s.message, durationMs);
      p.rates.push(window.rate);
      p.cpu.push(window.cpu);
    }
  }
  for (const p of prepared) for (const ws of p.sockets) ws.terminate();
  return new Map(prepared.map((p) => [p.s.name, { rate: median(p.rates), cpu: median(p.cpu) }]));
}

async function memoryPerConnection(server, port, count) {
  const tokens = await server.call('tokens', { provider: 'inmemory', count });
  const before = await server.call('memory');
  const sockets = await openClients(`ws://127.0.0.1:${port}/ws`, tokens, count);
  await sleep(500);
  const after = await server.call('memory');
  for (const ws of sockets) ws.terminate();
  return { rss: (after.rss - before.rss) / count, heap: (after.heapUsed - before.heapUsed) / count, external: (after.external - before.external) / count };
}

export async function run({ rounds = 5, durationMs = 1000 } = {}) {
  const notes = [];
  const redisBinary = findRedisServer();
  const redis = redisBinary ? await startRedis(redisBinary) : undefined;
  if (!redis) notes.push('redis-server not found: the Redis rows are missing from this run.');
  const server = startServer(redis ? { BENCH_REDIS_URL: redis.url } : {});
  const ports = await server.started;
  const tokens = { inmemory: await server.call('tokens', { provider: 'inmemory', count: 50 }) };
  if (ports.redis) tokens.redis = await server.call('tokens', { provider: 'redis', count: 50 });

  const request = (gate) => (id) => JSON.stringify({ id, portal: '/bench', gate, data: PAYLOAD });
  const scenarios = [
    { name: 'raw ws echo', path: '/raw', provider: 'inmemory', message: request('open') },
    { name: 'JSON echo', path: '/json', provider: 'inmemory', message: request('open') },
    { name: 'our gate, unshielded', path: '/ws', provider: 'inmemory', message: request('open'), auth: true },
    { name: '@SessionShield gate, in-memory store', path: '/ws', provider: 'inmemory', message: request('shielded'), auth: true },
    ...(ports.redis ? [{ name: '@SessionShield gate, Redis (near cache)', path: '/ws', provider: 'redis', message: request('shielded'), auth: true }] : []),
  ];

  for (const s of scenarios) {
    s.url = `ws://127.0.0.1:${ports[s.provider]}${s.path}`;
    s.tokens = s.auth ? tokens[s.provider] : undefined;
  }
  const rows = [];
  for (const clients of [1, 50]) {
    const results = await measureAll(server, scenarios, clients, { rounds, durationMs });
    const json = results.get('JSON echo');
    const open = results.get('our gate, unshielded');
    for (const s of scenarios) {
      const r = results.get(s.name);
      const shielded = s.name.startsWith('@SessionShield');
      rows.push({
        scenario: s.name,
        clients,
        'msg/s': Math.round(r.rate),
        'ratio to JSON echo': relative(r.rate, json.rate),
        'ratio to our unshielded': relative(r.rate, open.rate),
        'server CPU µs/msg': Number(r.cpu.toFixed(2)),
        'CPU over unshielded µs/msg': shielded ? Number((r.cpu - open.cpu).toFixed(2)) : '',
      });
    }
  }

  const memory = await memoryPerConnection(server, ports.inmemory, 5000);
  notes.push(
    `Server memory per idle authenticated WebSocket connection at 5,000 (session token in the upgrade header, in-memory store): ` +
      `${(memory.rss / 1024).toFixed(1)} KiB RSS, ${(memory.heap / 1024).toFixed(1)} KiB JS heap, ${(memory.external / 1024).toFixed(1)} KiB external.`,
    'Targets: the session check adds ≤ 2 µs server CPU per message (column "CPU over unshielded"); shielded ≥ 0.95× our unshielded; our unshielded ≥ 0.8× JSON echo.',
    'Each client keeps one request in flight; with 50 clients on a 2-core machine the client process competes with the server for CPU, so throughput ratios are noisier than CPU per message.',
  );
  await server.call('close').catch(() => {});
  await new Promise((resolve) => (server.child.exitCode !== null ? resolve() : server.child.once('exit', resolve)));
  await redis?.stop();
  return {
    columns: ['scenario', 'clients', 'msg/s', 'ratio to JSON echo', 'ratio to our unshielded', 'server CPU µs/msg', 'CPU over unshielded µs/msg'],
    rows,
    notes,
  };
}
