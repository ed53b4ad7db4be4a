/**
 * Report (d): overload and recovery. N authenticated WebSocket players send `move`
 * to the example server. First the server's capacity is measured, unless given: a
 * closed loop (every player keeps one request in flight), its reply rate scaled to one
 * full server core when the server was not saturated.
 * Then the offered load runs in phases, open loop: half the capacity (steady), twice
 * the capacity for 10 s (overload), half again (recovery). Per phase: how many
 * requests were answered within 1 s (a reply or a refusal both count: a fast "no" is
 * an answer), the refusal codes seen, latency, and the CPU of the server and of the
 * generator; and how long after the load dropped the p99 latency (of requests by the
 * time they were sent, in 250 ms buckets) got back under 50 ms and stayed there.
 *
 * Revocation under overload: `revoked` more players (100 by default) send `move` at
 * 10/s each from the first phase on, outside the phase tallies, and are logged out
 * (`POST /auth/logout` with their session token) one by one: two thirds spread over the
 * overload phase, the rest over the first half of the recovery. From a logout's 204 on,
 * a request of that player answered `ok: true` is a violation, and so is a reconnect with
 * the revoked token that the server accepts; the socket must close with 4401. Reported:
 * players revoked, closed with 4401 and how fast after the 204 (p50/p99), violations.
 * revocation-probe.js says what counts how.
 */
import { performance } from 'node:perf_hooks';
import { upgradeAll } from '../lib/http-client.js';
import { formatMachineLoad, processTicks, watchMachineLoad } from '../lib/machine-load.js';
import { startLoopMonitor } from '../lib/loop-monitor.js';
import { phasedDriver } from '../lib/phased-load.js';
import { revocationProbe } from '../lib/revocation-probe.js';
import { startGameServer } from '../lib/server-handle.js';
import { formatServerLog, int, latencySummary, ms, sleep } from '../lib/stats.js';
import { closeSockets, moveDriver, openSockets } from '../lib/ws-load.js';

const BUCKET_MS = 250;
const P99_TARGET_MS = 50;
/** How long p99 must stay under the target at the end of the recovery phase to count as recovered. */
const HOLD_S = 2;
/** The offered load never exceeds this, whatever the measured capacity: the loop stays bounded. */
const MAX_RATE = 200_000;

/**
 * Closed loop for `seconds` after a 1 s warm-up. Answers the replies per second, the
 * cores the server and the generator used meanwhile, and the capacity: the reply rate
 * scaled to one full server core when the server was not saturated (a closed loop on a
 * shared machine can leave it partly idle), since its per-message cost is what it is.
 */
async function measureCapacity(sockets, seconds, serverPid) {
  const driver = moveDriver(sockets, { rate: 0 });
  driver.start();
  await sleep(1000);
  driver.measure();
  const cpu = process.cpuUsage();
  const serverTicks = processTicks(serverPid);
  const began = performance.now();
  await sleep(seconds * 1000);
  const elapsed = (performance.now() - began) / 1000;
  const used = process.cpuUsage(cpu);
  const serverCores = (processTicks(serverPid) - serverTicks) / 100 / elapsed;
  const result = await driver.stop();
  for (const ws of sockets) ws.removeAllListeners('message');
  const rate = result.windowReplies / elapsed;
  return {
    rate,
    perCore: serverCores > 0.2 && serverCores < 1 ? rate / serverCores : rate,
    serverCores,
    generatorCores: (used.user + used.system) / 1e6 / elapsed,
    errors: result.errorReplies + result.mismatched + result.unexpectedCloses,
  };
}

/**
 * p99 latency of the phase's requests in buckets of `bucketMs` by send time; a request
 * never answered counts as infinitely late; a bucket in which nothing was sent is NaN.
 */
function bucketP99(phase, bucketMs) {
  const seconds = (phase.endedAt - phase.startedAt) / 1000;
  const buckets = Array.from({ length: Math.max(1, Math.ceil((seconds * 1000) / bucketMs)) }, () => []);
  const put = (offset, latency) => buckets[Math.min(buckets.length - 1, Math.max(0, Math.floor(offset / bucketMs)))].push(latency);
  phase.sentOffsets.forEach((offset, i) => put(offset, phase.latencies[i]));
  for (const offset of phase.unanswered) put(offset, Infinity);
  return buckets.map((b) => (b.length === 0 ? Number.NaN : latencySummary(b).p99));
}

/**
 * When, after the phase began, p99 got under the target for good: every later 250 ms
 * bucket under it too, for at least the last `HOLD_S` seconds of the phase (a good last
 * bucket alone proves nothing); and when it first did. Undefined when it did not.
 * Only whole buckets count; the phase's ragged end is left out.
 */
function recoveryAfterDrop(phase) {
  const whole = Math.floor((phase.endedAt - phase.startedAt) / BUCKET_MS);
  const p99 = bucketP99(phase, BUCKET_MS).slice(0, Math.max(1, whole));
  const under = (v) => Number.isNaN(v) || v < P99_TARGET_MS;
  let from = p99.length;
  while (from > 0 && under(p99[from - 1])) from--;
  while (from < p99.length && Number.isNaN(p99[from])) from++;
  const held = ((p99.length - from) * BUCKET_MS) / 1000 >= Math.min(HOLD_S, (p99.length * BUCKET_MS) / 5000);
  const first = p99.findIndex((v) => v < P99_TARGET_MS);
  return {
    seconds: held && from < p99.length ? (from * BUCKET_MS) / 1000 : undefined,
    firstSeconds: first === -1 ? undefined : (first * BUCKET_MS) / 1000,
    p99BySecondMs: bucketP99(phase, 1000),
  };
}

/** A phase's server event loop: its largest delay and its first 20 stalls of 50 ms or more, timed from the phase's start. */
function phaseLoop(loop, startS) {
  return { maxMs: loop.maxMs, stallCount: loop.over50, stalls: loop.stalls.map((s) => ({ ...s, atS: Number((s.atS - startS).toFixed(2)) })) };
}

function summarizePhase(phase, cpu) {
  const seconds = (phase.endedAt - phase.startedAt) / 1000;
  const latency = latencySummary(phase.latencies);
  const refused = Object.values(phase.refusals).reduce((a, b) => a + b, 0);
  return {
    name: phase.name,
    seconds,
    offeredPerSecond: phase.rate,
    attempted: phase.attempted,
    sent: phase.sent,
    skippedAtInFlightCap: phase.skipped,
    replies: phase.replies,
    refused,
    refusals: phase.refusals,
    unanswered: phase.unanswered.length,
    answeredWithin1s: phase.answeredWithin1s,
    answeredWithin1sShare: phase.sent === 0 ? Number.NaN : phase.answeredWithin1s / phase.sent,
    latencyMs: { p50: latency.p50, p99: latency.p99, max: latency.max },
    mismatched: phase.mismatched,
    unexpectedCloses: phase.closes,
    serverCores: cpu.server,
    generatorCores: cpu.generator,
    generatorLoopMaxDelayMs: cpu.generatorLoopMaxMs,
  };
}

/**
 * @param {{ provider?: 'inmemory'|'redis', redisUrl?: string, redisPid?: number, clients: number, revoked?: number, capacity?: number, probeS?: number, steadyS?: number, overloadS?: number, recoveryS?: number, pinning?: string }} options
 *   `provider`: the session store (default in-memory; `redisUrl` for Redis);
 *   `revoked`: players logged out during the overload and the recovery (besides `clients`);
 *   `capacity`: msg/s to take as the server's capacity (0 or undefined: measure it); `pinning`: for the report.
 */
export async function runOverload({ provider = 'inmemory', redisUrl, redisPid, clients, revoked = 100, capacity, probeS = 5, steadyS = 5, overloadS = 10, recoveryS = 20, pinning }) {
  const server = await startGameServer({ provider, redisUrl });
  try {
    const sessions = await upgradeAll(server.http, await server.call('jwts', { prefix: 'overload-', count: clients }));
    const sockets = await openSockets(server.wsUrl, sessions.map((s) => s.accessToken));
    const sampleTokens = (await upgradeAll(server.http, await server.call('jwts', { prefix: 'revoked-', count: revoked }))).map((s) => s.accessToken);
    const sampleSockets = await openSockets(server.wsUrl, sampleTokens);
    const revocation = revocationProbe({ http: server.http, wsUrl: server.wsUrl, players: sampleSockets.map((ws, i) => ({ ws, token: sampleTokens[i] })) });
    const probe = capacity > 0 ? undefined : await measureCapacity(sockets, probeS, server.pid);
    const base = Math.min(capacity > 0 ? capacity : probe.perCore, MAX_RATE / 2);
    await sleep(1000);

    const driver = phasedDriver(sockets);
    const machine = watchMachineLoad({ server: server.pid, generator: process.pid, redis: redisPid });
    await server.call('loop-reset');
    const plan = [['steady, 0.5× capacity', base / 2, steadyS], ['overload, 2× capacity', base * 2, overloadS], ['recovery, 0.5× capacity', base / 2, recoveryS]];
    const cpuByPhase = [];
    const duringOverload = Math.round((revoked * 2) / 3);
    revocation.start();
    // Each phase's event loops, server and generator: latency is read in the generator, so a
    // late second is the server's only if the server's loop, not the generator's, stalled then.
    const serverLoops = [];
    const generatorLoops = [];
    for (const [name, rate, seconds] of plan) {
      await server.call('loop-reset');
      const loopStartS = (await server.call('loop-read')).nowS;
      const began = performance.now();
      const generator = process.cpuUsage();
      const generatorLoop = startLoopMonitor();
      const serverTicks = processTicks(server.pid);
      driver.phase(name, Math.round(rate));
      if (name === plan[1][0]) revocation.revokeOver(duringOverload, seconds * 1000);
      if (name === plan[2][0]) revocation.revokeOver(revoked - duringOverload, (seconds * 1000) / 2);
      await sleep(seconds * 1000);
      const elapsed = (performance.now() - began) / 1000;
      const used = process.cpuUsage(generator);
      const generatorLoopRead = generatorLoop.read();
      generatorLoop.stop();
      cpuByPhase.push({ server: (processTicks(server.pid) - serverTicks) / 100 / elapsed, generator: (used.user + used.system) / 1e6 / elapsed, generatorLoopMaxMs: generatorLoopRead.maxMs });
      generatorLoops.push(phaseLoop(generatorLoopRead, 0));
      serverLoops.push(phaseLoop(await server.call('loop-read'), loopStartS));
    }
    const phases = await driver.stop(5000);
    const revocations = await revocation.finish(5000);
    const machineLoad = machine.stop();
    await closeSockets([...sockets, ...sampleSockets]);
    const stats = await server.call('stats');

    const recovery = recoveryAfterDrop(phases[2]);
    return {
      name: 'overload',
      provider,
      clients,
      capacity: { perSecond: base, measured: probe !== undefined, probeS, probeRate: probe?.rate, probeServerCores: probe?.serverCores, probeGeneratorCores: probe?.generatorCores, probeErrors: probe?.errors },
      phases: phases.map((phase, i) => ({ ...summarizePhase(phase, cpuByPhase[i]), serverLoop: serverLoops[i], generatorLoop: generatorLoops[i] })),
      recovery: { p99TargetMs: P99_TARGET_MS, bucketMs: BUCKET_MS, seconds: recovery.seconds, firstSeconds: recovery.firstSeconds, withinS: recoveryS, p99BySecondMs: recovery.p99BySecondMs },
      steadyP99BySecondMs: bucketP99(phases[0], 1000),
      overloadP99BySecondMs: bucketP99(phases[1], 1000),
      revocations,
      eventLoopMaxDelayMs: Math.max(...serverLoops.map((l) => l.maxMs)),
      serverLogged: stats.problems,
      machineLoad,
      pinning,
    };
  } finally {
    await server.close();
  }
}

function codes(record) {
  const entries = Object.entries(record);
  return entries.length === 0 ? 'none' : entries.map(([code, n]) => `${code} ×${int(n)}`).join(', ');
}

function pct(share) {
  return Number.isFinite(share) ? `${(share * 100).toFixed(1)} %` : 'n/a';
}

/** Problems the revocation check found; each counts as an error of the run. */
export function revocationErrors(v) {
  return v.violations + v.logoutsFailed + v.notClosed + Object.values(v.otherCloses).reduce((a, b) => a + b, 0);
}

function formatRevocations(v) {
  if (!v) return [];
  const list = (record) => Object.entries(record).map(([k, n]) => `${k} ×${int(n)}`).join(', ') || 'none';
  const other = Object.keys(v.otherCloses).length ? `; closed with other codes: ${list(v.otherCloses)}` : '';
  return [
    `    revocation      ${int(v.revoked)} of ${int(v.players)} more players (move at 10/s each) logged out during overload and recovery${v.logoutsFailed ? `, ${v.logoutsFailed} logouts NOT answered 204` : ''}`,
    `      closed 4401   ${int(v.closed4401)} of ${int(v.revoked)} · after the logout's 204: p50 ${ms(v.closeAfterLogoutMs.p50)} · p99 ${ms(v.closeAfterLogoutMs.p99)} · max ${ms(v.closeAfterLogoutMs.max)} (0: closed before the 204 arrived, ${int(v.closedBeforeLogoutAnswer)} sockets)${v.notClosed ? ` · ${v.notClosed} NOT closed within ${v.graceMs / 1000} s` : ''}${other}`,
    `      violations    ${int(v.violations)} (replies ok to requests sent after the 204: ${int(v.okRepliesAfterLogout)}; reconnects with the revoked token: ${list(v.reconnects)})`,
    `      in flight     ${int(v.okInFlight)} replies ok after the 204 to requests sent before it (not violations); refusals after the 204: ${list(v.refusedAfterLogout)}`,
  ];
}

/** A phase's event loop: its largest delay and its stalls (when, how late, the process's CPU meanwhile). */
function loopLine(loop) {
  const stalls = loop.stalls.map((s) => `${s.atS} s: ${s.ms} ms (CPU ${s.cpuMs} of ${s.sinceMs} ms)`).join(', ');
  const more = loop.stallCount > loop.stalls.length ? ', …' : '';
  return `max delay ${ms(loop.maxMs)} · ${int(loop.stallCount)} stalls ≥ 50 ms${stalls ? `: ${stalls}${more}` : ''} (s into the phase)`;
}

/** The printed report. */
export function formatOverload(r) {
  const c = r.capacity;
  const scaled = c.measured && c.perSecond > c.probeRate * 1.01 ? ` = ${int(c.probeRate)} msg/s answered ÷ ${c.probeServerCores.toFixed(2)} server cores` : '';
  const capacityLine = c.measured
    ? `${int(c.perSecond)} msg/s${scaled}, measured: closed loop for ${c.probeS} s, every player one request in flight; server ${c.probeServerCores.toFixed(2)} cores, generator ${c.probeGeneratorCores.toFixed(2)} cores${c.probeGeneratorCores > 0.9 ? ' — the generator near a full core may have set this pace' : ''}`
    : `${int(c.perSecond)} msg/s, given with --capacity`;
  const lines = [
    `(d) overload: ${int(r.clients)} authenticated WebSocket clients sending move, ${r.provider === 'redis' ? 'Redis store' : 'in-memory store'} — offered load in phases, open loop`,
    `    capacity        ${capacityLine}`,
  ];
  for (const p of r.phases) {
    lines.push(
      `    ${p.name} (${p.seconds.toFixed(1)} s)`,
      `      offered       ${int(p.offeredPerSecond)} msg/s asked, ${int(p.sent / p.seconds)} msg/s sent (${int(p.sent)})${p.skippedAtInFlightCap ? `, ${int(p.skippedAtInFlightCap)} not sent (a client had 64 requests outstanding)` : ''}${p.sent / p.seconds < 0.95 * p.offeredPerSecond ? ' — the generator fell behind' : ''}`,
      `      answered ≤1 s ${pct(p.answeredWithin1sShare)} of those sent (replies or refusals); ${int(p.replies)} answered in all, ${int(p.unanswered)} never (within 5 s of the end)`,
      `      refusals      ${codes(p.refusals)}${Object.keys(p.unexpectedCloses).length ? ` · connections closed: ${Object.entries(p.unexpectedCloses).map(([code, n]) => `code ${code} ×${n}`).join(', ')}` : ''}${p.mismatched ? ` · ${p.mismatched} replies out of order` : ''}`,
      `      latency       p50 ${ms(p.latencyMs.p50)} · p99 ${ms(p.latencyMs.p99)} · max ${ms(p.latencyMs.max)}`,
      // Latency is read in the generator: its own stalls add to it (reports saved before this have no such figure).
      `      CPU           server ${p.serverCores.toFixed(2)} cores · generator ${p.generatorCores.toFixed(2)} cores${p.generatorLoopMaxDelayMs === undefined ? '' : ` · generator event-loop max delay ${ms(p.generatorLoopMaxDelayMs)}`}`,
      // Reports saved before 2026-11-28 have no per-phase loops.
      ...(p.serverLoop ? [`      server loop   ${loopLine(p.serverLoop)}`, `      gen. loop     ${loopLine(p.generatorLoop)}`] : []),
    );
  }
  const rec = r.recovery;
  const bySecond = (values) => values.map((v) => (Number.isNaN(v) ? '–' : Number.isFinite(v) ? Math.round(v).toLocaleString('en-US') : '∞')).join(' · ');
  const first = rec.firstSeconds === undefined ? '' : `; first under it ${rec.firstSeconds.toFixed(2)} s after the drop`;
  lines.push(
    `    recovery        ${rec.seconds === undefined ? `p99 NOT back under ${rec.p99TargetMs} ms for good (the last 2 s of the phase at least) within the ${rec.withinS} s of the recovery phase` : `p99 back under ${rec.p99TargetMs} ms ${rec.seconds.toFixed(2)} s after the load dropped, and stayed there`}${first} (requests by send time, ${rec.bucketMs} ms buckets)`,
    `    p99 by second   steady ${bySecond(r.steadyP99BySecondMs)} | overload ${bySecond(r.overloadP99BySecondMs)} | recovery ${bySecond(rec.p99BySecondMs)} (ms)`,
    ...formatRevocations(r.revocations),
    `    event loop      max delay ${ms(r.eventLoopMaxDelayMs)} over the three phases`,
    `    machine         ${formatMachineLoad(r.machineLoad)}`,
    `    pinning         ${r.pinning ?? 'not recorded'}`,
    `    server log      ${formatServerLog(r.serverLogged)}`,
  );
  return lines.join('\n');
}
