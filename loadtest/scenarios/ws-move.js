/**
 * Report (a): N concurrent authenticated WebSocket clients sending `move` for a
 * fixed time against the example server, on the in-memory store and on Redis,
 * beside the control: a bare `ws` server without authentication (provider
 * `control`), driven the same way, whose numbers are the floor of ws, Node and the
 * machine.
 * Each client gets its own player: a JWT (what a login answers) upgraded to a
 * session through `POST /auth/upgrade`, then a socket opened with
 * `Authorization: Bearer <session token>`.
 */
import { performance } from 'node:perf_hooks';
import { upgradeAll } from '../lib/http-client.js';
import { formatMachineLoad, watchMachineLoad } from '../lib/machine-load.js';
import { startControlServer, startGameServer } from '../lib/server-handle.js';
import { startLoopMonitor } from '../lib/loop-monitor.js';
import { formatServerLog, int, latencySummary, mb, ms, sleep } from '../lib/stats.js';
import { closeSockets, moveDriver, openSockets } from '../lib/ws-load.js';

/**
 * @param {{ provider: 'control'|'inmemory'|'redis', redisUrl?: string, redisPid?: number, clients: number, durationS: number, rate: number, pinning?: string }} options
 *   `pinning`: how server and generator were placed, for the report.
 */
export async function runWsMove({ provider, redisUrl, redisPid, clients, durationS, rate, pinning }) {
  const control = provider === 'control';
  const server = control ? await startControlServer() : await startGameServer({ provider, redisUrl });
  try {
    const idle = await server.call('stats', { gc: true });
    let t = performance.now();
    const tokens = control ? Array.from({ length: clients }, () => null) : (await upgradeAll(server.http, await server.call('jwts', { prefix: `${provider}-player-`, count: clients }))).map((s) => s.accessToken);
    const upgradeSeconds = (performance.now() - t) / 1000;

    t = performance.now();
    const sockets = await openSockets(server.wsUrl, tokens);
    const openSeconds = (performance.now() - t) / 1000;
    const connected = await server.call('stats', { gc: true });

    const driver = moveDriver(sockets, { rate });
    // Long enough for the server to absorb the connect wave (5,000 sockets opened in about 2 s, then their first messages).
    const warmupMs = Math.min(5000, Math.max(3000, durationS * 100));
    driver.start();
    await sleep(warmupMs);
    // Latency is read here, so a reply that arrives while this loop is stalled counts as late by the
    // stall: watched from the first measured request to the last reply waited for.
    const generatorLoop = startLoopMonitor();
    driver.measure();
    const before = await server.call('stats');
    await server.call('loop-reset');
    const machine = watchMachineLoad({ server: server.pid, generator: process.pid, redis: redisPid });
    const generatorBefore = process.cpuUsage();
    const began = performance.now();
    await sleep(durationS * 1000);
    const machineLoad = machine.stop();
    const seconds = (performance.now() - began) / 1000;
    const generatorUsed = process.cpuUsage(generatorBefore);
    const generatorMicros = generatorUsed.user + generatorUsed.system;
    const after = await server.call('stats');
    const loop = await server.call('loop-read');
    const result = await driver.stop();
    const generatorLoopDelay = generatorLoop.read();
    generatorLoop.stop();
    const end = await server.call('stats', { gc: true });
    await closeSockets(sockets);
    await sleep(500);
    const disconnected = await server.call('stats', { gc: true });

    const latency = latencySummary(result.latencies);
    const errors = result.errorReplies + result.mismatched + result.unexpectedCloses + result.missing;
    const cpuPerMsg = (after.cpuMicros - before.cpuMicros) / Math.max(1, result.windowReplies);
    return {
      name: `ws-move-${provider}`,
      provider,
      clients,
      durationS,
      ratePerClient: rate,
      messagesPerSecond: result.windowReplies / seconds,
      latencyMs: { p50: latency.p50, p99: latency.p99, max: latency.max },
      errors,
      errorDetail: { errorReplies: result.errorReplies, errorCodes: result.errorCodes, mismatched: result.mismatched, unexpectedCloses: result.unexpectedCloses, missing: result.missing, skippedAtInFlightCap: result.skipped },
      rss: { idle: idle.rss, start: connected.rss, end: end.rss, afterDisconnect: disconnected.rss },
      heapAfterGc: { idle: idle.heapUsed, start: connected.heapUsed, end: end.heapUsed, afterDisconnect: disconnected.heapUsed },
      serverCpuMicrosPerMessage: cpuPerMsg,
      serverCpuCores: (after.cpuMicros - before.cpuMicros) / 1e6 / seconds,
      generatorCpuMicrosPerMessage: generatorMicros / Math.max(1, result.windowReplies),
      generatorCpuCores: generatorMicros / 1e6 / seconds,
      generatorEventLoopMaxDelayMs: generatorLoopDelay.maxMs,
      generatorEventLoopStalls: generatorLoopDelay.over50,
      generatorEventLoopStallList: generatorLoopDelay.stalls,
      pinning,
      eventLoopMaxDelayMs: loop.maxMs,
      eventLoopStalls: loop.stalls,
      eventLoopStallCount: loop.over50,
      serverConnections: { atEnd: end.connections, afterDisconnect: disconnected.connections },
      serverLogged: disconnected.problems ?? { warn: 0, error: 0 },
      setup: { upgradeSeconds, openSeconds },
      machineLoad,
    };
  } finally {
    await server.close();
  }
}

/**
 * The stalls of ≥ 50 ms, server then generator: when (s into the watch), how late, and the
 * process's CPU over the interval since the timer's previous firing (10 ms plus the delay).
 */
function stallLines(r) {
  const cpu = (s) => (s.cpuMs === undefined ? '' : ` (CPU ${s.cpuMs} of ${s.sinceMs} ms)`);
  const list = (stalls) => stalls.map((s) => `${s.atS} s: ${s.ms} ms${cpu(s)}`).join(', ');
  return [
    ...(r.eventLoopStalls?.length ? [`    server stalls   ${list(r.eventLoopStalls)}`] : []),
    ...(r.generatorEventLoopStallList?.length ? [`    gen. stalls     ${list(r.generatorEventLoopStallList)}`] : []),
  ];
}

/** The printed report of one run. */
export function formatWsMove(r) {
  const offered = r.ratePerClient === 0 ? 'closed loop (one request in flight per client)' : `${r.ratePerClient} msg/s per client (${int(r.clients * r.ratePerClient)} msg/s offered)`;
  const d = r.errorDetail;
  const what = { control: 'CONTROL: bare ws server, no authentication (the floor of ws, Node and this machine)', redis: 'Redis store', inmemory: 'in-memory store' }[r.provider];
  return [
    `(a) ${int(r.clients)} ${r.provider === 'control' ? '' : 'authenticated '}WebSocket clients sending move — ${what}`,
    `    duration        ${r.durationS} s measured (after a warm-up), ${offered}`,
    `    messages/s      ${int(r.messagesPerSecond)}`,
    `    latency         p50 ${ms(r.latencyMs.p50)} · p99 ${ms(r.latencyMs.p99)} · max ${ms(r.latencyMs.max)}`,
    `    errors          ${int(r.errors)} (error replies ${d.errorReplies}${Object.keys(d.errorCodes).length ? ` ${JSON.stringify(d.errorCodes)}` : ''}, out of order ${d.mismatched}, unexpected closes ${d.unexpectedCloses}, unanswered ${d.missing})`,
    `    server RSS      idle ${mb(r.rss.idle)} → start (${int(r.clients)} connected) ${mb(r.rss.start)} → end ${mb(r.rss.end)} → after disconnect ${mb(r.rss.afterDisconnect)}`,
    `    server heap     after GC: idle ${mb(r.heapAfterGc.idle)} → start ${mb(r.heapAfterGc.start)} → end ${mb(r.heapAfterGc.end)} → after disconnect ${mb(r.heapAfterGc.afterDisconnect)}`,
    `    server CPU      ${r.serverCpuMicrosPerMessage.toFixed(1)} µs/msg · ${r.serverCpuCores.toFixed(2)} cores · event-loop max delay ${ms(r.eventLoopMaxDelayMs)} (${r.eventLoopStallCount ?? r.eventLoopStalls.length} stalls ≥ 50 ms)`,
    `    generator CPU   ${r.generatorCpuMicrosPerMessage.toFixed(1)} µs/msg · ${r.generatorCpuCores.toFixed(2)} cores (the load generator's own process.cpuUsage(); near 1 core it, not the server, sets the pace)`,
    ...stallLines(r),
    // Reports saved before the generator's loop was measured have no such line.
    ...(r.generatorEventLoopMaxDelayMs === undefined ? [] : [`    generator loop  event-loop max delay ${ms(r.generatorEventLoopMaxDelayMs)} (${r.generatorEventLoopStalls} stalls ≥ 50 ms): latency is read in the generator, so a stall of it adds to the latency of every reply it leaves unread`]),
    `    pinning         ${r.pinning ?? 'not recorded'}`,
    `    setup           ${r.provider === 'control' ? '' : `${int(r.clients)} upgrades over HTTP in ${r.setup.upgradeSeconds.toFixed(1)} s, `}${int(r.clients)} sockets opened in ${r.setup.openSeconds.toFixed(1)} s`,
    `    machine         ${formatMachineLoad(r.machineLoad)}`,
    `    server log      ${formatServerLog(r.serverLogged)}; connections after disconnect: ${JSON.stringify(r.serverConnections.afterDisconnect)}`,
  ].join('\n');
}
