/**
 * WebSocket round trips through @portcullis/ws beside plain `ws`, in one run:
 * raw `ws` echo, JSON echo, our unshielded gate, our @SessionShield gate on the
 * in-memory store and on Redis (near cache), with 1 and 50 clients (each client
 * keeps one request in flight). The server runs in a child process pinned to
 * one core, the clients on another (taskset), so its CPU per message
 * (process.cpuUsage over the run ÷ messages) excludes the clients. Every run
 * sends a fixed number of messages, every scenario runs right beside its
 * baseline (before it every other round), and the paired values are printed as median (min–max).
 * Also: server memory per idle authenticated connection at 5,000.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';
import { pinProcess, planPinning, watchCore } from './lib/cpu-pinning.js';
import { median, runPair, verdict, withSpread } from './lib/measure.js';
import { findRedisServer, startRedis } from './lib/redis.js';
import { startServerProcess } from './lib/server-process.js';

export const title = 'WebSocket round trips: raw ws, JSON echo, our gates (server in a child process, fixed message count)';

const here = dirname(fileURLToPath(import.meta.url));
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const PAYLOAD = { x: 12, y: 34 };

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
 * Closed loop until exactly `target` replies: every client sends its next message
 * when its previous reply arrives, and no message beyond the target is sent.
 * Answers the seconds from the first send to the last reply.
 */
function drive(sockets, message, target) {
  return new Promise((resolve, reject) => {
    let sent = 0;
    let replies = 0;
    const listeners = [];
    const senders = [];
    const started = performance.now();
    const timer = setTimeout(() => finish(new Error(`ws bench: ${replies} of ${target} replies after 120 s`)), 120_000);
    const finish = (error) => {
      clearTimeout(timer);
      for (const [ws, onMessage] of listeners) ws.off('message', onMessage);
      if (error) reject(error);
      else resolve((performance.now() - started) / 1000);
    };
    for (const ws of sockets) {
      let id = 0;
      const send = () => {
        if (sent >= target) return;
        sent++;
        ws.send(message(++id));
      };
      const onMessage = () => {
        if (++replies === target) finish();
        else send();
      };
      ws.on('message', onMessage);
      listeners.push([ws, onMessage]);
      senders.push(send);
    }
    for (const send of senders) send();
  });
}

/** One measured run of one scenario: `count` messages; msg/s and server CPU µs per message. */
async function measureRun(server, sockets, message, count, watch) {
  const core = watch();
  await server.call('cpu-start');
  const seconds = await drive(sockets, message, count);
  const micros = await server.call('cpu-stop');
  return { rate: count / seconds, cpu: micros / count, others: core.stop() };
}

/**
 * Opens every scenario's connections for this client count, warms each up, then
 * runs `rounds` rounds in which every paired scenario runs right beside its
 * baseline (after it in even rounds, before it in odd ones), in an order that rotates by round.
 */
async function measureAll(server, scenarios, clients, { rounds, count, watch }) {
  const prepared = new Map();
  for (const s of scenarios) prepared.set(s.name, { s, sockets: await openClients(s.url, s.tokens, clients), rates: [], cpu: [], rateRatio: [], cpuRatio: [], cpuOver: [], others: [] });
  const run = async (p) => {
    const sample = await measureRun(server, p.sockets, p.s.message, count, watch);
    p.rates.push(sample.rate);
    p.cpu.push(sample.cpu);
    if (sample.others !== undefined) p.others.push(sample.others);
    return sample;
  };
  for (const p of prepared.values()) await drive(p.sockets, p.s.message, Math.max(1000, Math.round(count / 2)));
  const pairs = scenarios.filter((s) => s.baseline);
  for (let r = 0; r < rounds; r++) {
    for (let k = 0; k < pairs.length; k++) {
      const s = pairs[(k + r) % pairs.length];
      const { baseline, sample } = await runPair(r, () => run(prepared.get(s.baseline)), () => run(prepared.get(s.name)));
      const p = prepared.get(s.name);
      p.rateRatio.push(sample.rate / baseline.rate);
      p.cpuRatio.push(baseline.cpu / sample.cpu);
      p.cpuOver.push(sample.cpu - baseline.cpu);
    }
  }
  for (const p of prepared.values()) for (const ws of p.sockets) ws.terminate();
  return prepared;
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

export const defaults = { rounds: 10, count: 20_000 };

export async function run({ rounds, count, pin = true, serverCpu = 1, generatorCpu = 0 }) {
  const notes = [];
  const plan = planPinning({ pin, serverCpu, generatorCpu });
  if (plan.warning) console.warn(`warning: ${plan.warning}`);
  pinProcess(plan.generatorCpu);
  const redisBinary = findRedisServer();
  const redis = redisBinary ? await startRedis(redisBinary) : undefined;
  if (!redis) notes.push('redis-server not found: the Redis rows are missing from this run.');
  const server = await startServerProcess(join(here, 'lib', 'ws-bench-server.js'), [], {
    execArgv: ['--expose-gc'],
    env: { ...process.env, ...(redis ? { BENCH_REDIS_URL: redis.url } : {}) },
    cpu: plan.serverCpu,
  });
  const { ports } = server.info;
  const watch = () => watchCore(plan.serverCpu, server.pid);
  const tokens = { inmemory: await server.call('tokens', { provider: 'inmemory', count: 50 }) };
  if (ports.redis) tokens.redis = await server.call('tokens', { provider: 'redis', count: 50 });

  const request = (gate) => (id) => JSON.stringify({ id, portal: '/bench', gate, data: PAYLOAD });
  const scenarios = [
    { name: 'JSON echo', path: '/json', provider: 'inmemory', message: request('open') },
    { name: 'raw ws echo', path: '/raw', provider: 'inmemory', message: request('open'), baseline: 'JSON echo' },
    { name: 'our gate, unshielded', path: '/ws', provider: 'inmemory', message: request('open'), auth: true, baseline: 'JSON echo' },
    { name: '@SessionShield gate, in-memory store', path: '/ws', provider: 'inmemory', message: request('shielded'), auth: true, baseline: 'our gate, unshielded' },
    ...(ports.redis ? [{ name: '@SessionShield gate, Redis (near cache)', path: '/ws', provider: 'redis', message: request('shielded'), auth: true, baseline: 'our gate, unshielded' }] : []),
  ];
  for (const s of scenarios) {
    s.url = `ws://127.0.0.1:${ports[s.provider]}${s.path}`;
    s.tokens = s.auth ? tokens[s.provider] : undefined;
  }

  const rows = [];
  const others = [];
  const targets = [];
  try {
    for (const clients of [1, 50]) {
      const results = await measureAll(server, scenarios, clients, { rounds, count, watch });
      for (const s of scenarios) {
        const r = results.get(s.name);
        others.push(...r.others);
        const paired = s.baseline !== undefined;
        rows.push({
          scenario: s.name,
          clients,
          baseline: paired ? s.baseline : '–',
          'msg/s': Math.round(median(r.rates)),
          'msg/s ratio to baseline': paired ? withSpread(r.rateRatio, 2) : '–',
          'server CPU µs/msg': Number(median(r.cpu).toFixed(2)),
          'CPU over baseline µs/msg': paired ? withSpread(r.cpuOver, 2) : '–',
          'CPU-bound ratio to baseline': paired ? withSpread(r.cpuRatio, 2) : '–',
        });
        if (s.name.startsWith('@SessionShield')) targets.push(`${s.name.slice('@SessionShield gate, '.length)}, ${clients} client${clients === 1 ? '' : 's'}: ${withSpread(r.cpuOver, 2)} µs/msg (${verdict(r.cpuOver, { atMost: 1 })}), msg/s ratio ${withSpread(r.rateRatio, 2)}`);
      }
    }
    const memory = await memoryPerConnection(server, ports.inmemory, 5000);
    notes.push(
      `${plan.enabled ? `Pinned: ${plan.line}.` : `NOT pinned: ${plan.warning}; the clients and the server compete for the same cores.`} Every run sends exactly ${count.toLocaleString('en-US')} messages (closed loop: each client keeps one request in flight), after one warm-up run of every scenario; ${rounds} round${rounds === 1 ? '' : 's'}, in each of which every scenario runs right beside its baseline (column "baseline"; after it in even rounds, before it in odd ones), in an order that rotates by round.`,
      'Ratio and "over baseline" columns: the median over the rounds of each scenario\'s paired value against the baseline run beside it, with the min–max of those paired values in brackets. "msg/s" and "server CPU µs/msg" are medians over every run of the row. Server CPU is the server process\'s own process.cpuUsage() (user + system, all its threads) over the run ÷ messages; the clients run in another process on another core and are not counted.',
      `Target "the session check adds ≤ 1 µs server CPU per message over the unshielded gate" (column "CPU over baseline"): ${targets.join('; ')}.`,
      `Server memory per idle authenticated WebSocket connection at 5,000 (session token in the upgrade header, in-memory store): ` +
        `${(memory.rss / 1024).toFixed(1)} KiB RSS, ${(memory.heap / 1024).toFixed(1)} KiB JS heap, ${(memory.external / 1024).toFixed(1)} KiB external.`,
      'With 50 clients the single client core can become the limit before the server\'s does: msg/s then says more about the clients, while server CPU per message still measures the server.',
    );
    if (others.length > 0) {
      notes.push(`Other work on the server's core during the measured runs (other processes, interrupts): median ${(median(others) * 100).toFixed(1)} %, largest ${(Math.max(...others) * 100).toFixed(1)} %. Runs with more than a few % are noise: rerun on a quieter machine.`);
    }
  } finally {
    await server.stop();
    await redis?.stop();
  }
  return {
    columns: ['scenario', 'clients', 'baseline', 'msg/s', 'msg/s ratio to baseline', 'server CPU µs/msg', 'CPU over baseline µs/msg', 'CPU-bound ratio to baseline'],
    rows,
    notes,
  };
}
