/**
 * Report (a) on a fleet (`--providers=redis-fleet`): the `move` load of ws-move.js against
 * `servers` example game servers (default 3), each in its own process, all on one Redis.
 * Client i upgrades its session over HTTP on server i+1 and opens its socket on server i
 * (mod the fleet), so every socket is admitted with a session another server made. Reports
 * the fleet's messages per second and latency, and each server's CPU beside the total.
 * The servers run unpinned: several of them share the machine's cores.
 */
import { performance } from 'node:perf_hooks';
import { upgradeAll } from '../lib/http-client.js';
import { formatMachineLoad, watchMachineLoad } from '../lib/machine-load.js';
import { startGameServer } from '../lib/server-handle.js';
import { latencySummary, int, ms, sleep } from '../lib/stats.js';
import { closeSockets, moveDriver, openSockets } from '../lib/ws-load.js';

/**
 * @param {{ redisUrl: string, redisPid?: number, servers: number, clients: number, durationS: number, rate: number }} options
 */
export async function runWsFleet({ redisUrl, redisPid, servers: count, clients, durationS, rate }) {
  if (!Number.isInteger(count) || count < 2) throw new Error('--fleet-servers must be an integer of at least 2');
  const servers = [];
  const sockets = [];
  try {
    for (let i = 0; i < count; i++) servers.push(await startGameServer({ provider: 'redis', redisUrl, cpu: null }));
    const jwts = await servers[0].call('jwts', { prefix: 'fleet-player-', count: clients });
    const byServer = servers.map(() => []);
    jwts.forEach((jwt, i) => byServer[i % count].push(jwt));
    for (let s = 0; s < count; s++) {
      const sessions = await upgradeAll(servers[(s + 1) % count].http, byServer[s]);
      sockets.push(...(await openSockets(servers[s].wsUrl, sessions.map((x) => x.accessToken))));
    }

    const driver = moveDriver(sockets, { rate });
    driver.start();
    await sleep(Math.min(5000, Math.max(1000, durationS * 100)));
    driver.measure();
    const before = await Promise.all(servers.map((s) => s.call('stats')));
    const roles = Object.fromEntries(servers.map((s, i) => [`server ${i + 1}`, s.pid]));
    const machine = watchMachineLoad({ ...roles, generator: process.pid, redis: redisPid });
    const began = performance.now();
    await sleep(durationS * 1000);
    const machineLoad = machine.stop();
    const seconds = (performance.now() - began) / 1000;
    const after = await Promise.all(servers.map((s) => s.call('stats')));
    const result = await driver.stop();
    await closeSockets(sockets);

    const cores = after.map((a, i) => (a.cpuMicros - before[i].cpuMicros) / 1e6 / seconds);
    const totalCores = cores.reduce((x, y) => x + y, 0);
    const latency = latencySummary(result.latencies);
    const errors = result.errorReplies + result.mismatched + result.unexpectedCloses + result.missing;
    return {
      name: 'ws-move-redis-fleet',
      provider: 'redis-fleet',
      servers: count,
      clients,
      durationS,
      ratePerClient: rate,
      messagesPerSecond: result.windowReplies / seconds,
      latencyMs: { p50: latency.p50, p99: latency.p99, max: latency.max },
      errors,
      errorDetail: { errorReplies: result.errorReplies, errorCodes: result.errorCodes, mismatched: result.mismatched, unexpectedCloses: result.unexpectedCloses, missing: result.missing },
      perServer: after.map((a, i) => ({ cpuCores: cores[i], connections: a.connections.ws, logged: a.problems })),
      totalCpuCores: totalCores,
      totalCpuMicrosPerMessage: (totalCores * 1e6 * seconds) / Math.max(1, result.windowReplies),
      machineLoad,
    };
  } finally {
    await closeSockets(sockets);
    await Promise.all(servers.map((s) => s.close()));
  }
}

/** The printed report of one fleet run. */
export function formatWsFleet(r) {
  const d = r.errorDetail;
  const offered = r.ratePerClient === 0 ? 'closed loop (one request in flight per client)' : `${r.ratePerClient} msg/s per client (${int(r.clients * r.ratePerClient)} msg/s offered)`;
  return [
    `(a) ${int(r.clients)} authenticated WebSocket clients sending move — ${r.servers} server processes on one Redis`,
    `    duration        ${r.durationS} s measured (after a warm-up), ${offered}; sockets spread evenly, each on another server than the one that made its session`,
    `    messages/s      ${int(r.messagesPerSecond)} (the whole fleet)`,
    `    latency         p50 ${ms(r.latencyMs.p50)} · p99 ${ms(r.latencyMs.p99)} · max ${ms(r.latencyMs.max)}`,
    `    errors          ${int(r.errors)} (error replies ${d.errorReplies}${Object.keys(d.errorCodes).length ? ` ${JSON.stringify(d.errorCodes)}` : ''}, out of order ${d.mismatched}, unexpected closes ${d.unexpectedCloses}, unanswered ${d.missing})`,
    ...r.perServer.map((s, i) => `    server ${i + 1} CPU    ${s.cpuCores.toFixed(2)} cores · ${int(s.connections)} sockets · logged ${s.logged.warn} warnings, ${s.logged.error} errors`),
    `    total CPU       ${r.totalCpuCores.toFixed(2)} cores · ${r.totalCpuMicrosPerMessage.toFixed(1)} µs/msg over the fleet (servers unpinned)`,
    `    machine         ${formatMachineLoad(r.machineLoad)}`,
  ].join('\n');
}
