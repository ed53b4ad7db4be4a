/**
 * Report (b): a login storm. N players log in at once (`POST
 * /auth/login/unamepwd`, bcrypt at the configured cost, 11 by default) while
 * WebSocket players keep sending `move`. Reports logins per second, login
 * latency, and whether the server's event loop stayed responsive: the largest
 * delay of a 10 ms timer in the server process (target under 50 ms), and the
 * latency of the WebSocket traffic during the storm.
 */
import { performance } from 'node:perf_hooks';
import { postJson, upgradeAll } from '../lib/http-client.js';
import { formatMachineLoad, watchMachineLoad } from '../lib/machine-load.js';
import { startGameServer } from '../lib/server-handle.js';
import { int, latencySummary, ms, sleep } from '../lib/stats.js';
import { closeSockets, moveDriver, openSockets } from '../lib/ws-load.js';

const PASSWORD = 'load-test password 1234';

/**
 * @param {{ logins: number, rounds: number, workFactor: number, wsClients: number, pinning?: string }} options  `pinning`: how server and generator were placed, for the report.
 */
export async function runLoginStorm({ logins, rounds, workFactor, wsClients, pinning }) {
  // The server is not pinned here: bcrypt runs on the libuv pool, one hash per usable core but
  // one (BcryptLimiter), and the storm asks whether the event loop stays responsive meanwhile on
  // the whole machine. The generator (a few hundred requests) stays on its own core.
  const server = await startGameServer({ provider: 'inmemory', workFactor, cpu: null });
  try {
    await server.call('accounts', { prefix: 'storm-', count: logins, password: PASSWORD });
    const sessions = await upgradeAll(server.http, await server.call('jwts', { prefix: 'bystander-', count: wsClients }));
    const sockets = await openSockets(server.wsUrl, sessions.map((s) => s.accessToken));
    const bystanders = moveDriver(sockets, { rate: 10 });
    bystanders.start();
    await sleep(1000);

    const roundResults = [];
    let latencies = [];
    let failures = 0;
    const statuses = {};
    bystanders.measure();
    await server.call('loop-reset');
    const machine = watchMachineLoad({ server: server.pid, generator: process.pid });
    for (let round = 0; round < rounds; round++) {
      const began = performance.now();
      const answers = await Promise.all(
        Array.from({ length: logins }, (_, i) => postJson(`${server.http}/auth/login/unamepwd`, { username: `storm-${i}`, password: PASSWORD })),
      );
      const seconds = (performance.now() - began) / 1000;
      for (const a of answers) {
        statuses[a.status] = (statuses[a.status] ?? 0) + 1;
        if (a.status !== 200 || typeof a.json?.accessToken !== 'string') failures++;
      }
      latencies = latencies.concat(answers.map((a) => a.ms));
      roundResults.push({ seconds, loginsPerSecond: logins / seconds });
      await sleep(500);
    }
    const machineLoad = machine.stop();
    const loop = await server.call('loop-read');
    const traffic = await bystanders.stop();
    await closeSockets(sockets);

    const perRound = roundResults.map((r) => r.loginsPerSecond).sort((a, b) => a - b);
    const wsLatency = latencySummary(traffic.latencies);
    const login = latencySummary(latencies);
    return {
      name: 'login-storm',
      logins,
      rounds,
      workFactor,
      loginsPerSecond: perRound[perRound.length >> 1],
      roundSeconds: roundResults.map((r) => r.seconds),
      loginLatencyMs: { p50: login.p50, p99: login.p99, max: login.max },
      failures,
      statuses,
      eventLoop: { maxDelayMs: loop.maxMs, meanDelayMs: loop.meanMs, samples: loop.samples, stallsOver50ms: loop.over50 },
      webSocket: {
        clients: wsClients,
        messages: traffic.windowReplies,
        latencyMs: { p50: wsLatency.p50, p99: wsLatency.p99, max: wsLatency.max },
        errors: traffic.errorReplies + traffic.mismatched + traffic.unexpectedCloses + traffic.missing,
      },
      machineLoad,
      pinning: pinning && `server unpinned (bcrypt may use every core but one); ${pinning.replace(/^server on core \d+, /, '')}`,
    };
  } finally {
    await server.close();
  }
}

/** The printed report. */
export function formatLoginStorm(r) {
  const verdict = r.eventLoop.maxDelayMs < 50 ? 'met' : 'NOT met';
  return [
    `(b) login storm: ${int(r.logins)} concurrent logins at bcrypt cost ${r.workFactor}, ${r.rounds} round(s), ${r.webSocket.clients} WebSocket players sending move meanwhile`,
    `    logins/s        ${r.loginsPerSecond.toFixed(1)} (median of rounds; each round took ${r.roundSeconds.map((s) => `${s.toFixed(2)} s`).join(', ')})`,
    `    login latency   p50 ${ms(r.loginLatencyMs.p50)} · p99 ${ms(r.loginLatencyMs.p99)} · max ${ms(r.loginLatencyMs.max)}`,
    `    failures        ${r.failures} (statuses ${JSON.stringify(r.statuses)})`,
    `    event loop      10 ms timer in the server: max delay ${ms(r.eventLoop.maxDelayMs)}, mean ${ms(r.eventLoop.meanDelayMs)} over ${int(r.eventLoop.samples)} firings — target < 50 ms ${verdict}`,
    `    sockets served  ${int(r.webSocket.messages)} move replies during the storm, p50 ${ms(r.webSocket.latencyMs.p50)} · p99 ${ms(r.webSocket.latencyMs.p99)} · max ${ms(r.webSocket.latencyMs.max)}, errors ${r.webSocket.errors}`,
    `    machine         ${formatMachineLoad(r.machineLoad)}`,
    `    pinning         ${r.pinning ?? 'not recorded'}`,
  ].join('\n');
}
