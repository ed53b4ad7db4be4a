/**
 * Report (c): a soak at moderate load, sampling the server's RSS, heap after a
 * full GC and active handles, and fitting a least-squares line through the
 * samples after a warm-up: a leak shows as a steady slope. Then, under the same
 * load, two heap snapshots a few minutes apart are compared by application
 * objects, which is what the verdict is based on. The load mixes steady
 * players (WebSocket, TCP and UDP sending `move`) with churn: players who log
 * in, upgrade, connect over WebSocket and TCP, move, and log out (which closes
 * their sockets through revocation), and anonymous sockets that ping and leave.
 *
 * The verdict is a leak test, not a growth test: some of the session store's entries are
 * kept by design after a churn cycle ends, each namespace with a documented bound, and
 * their growth between the snapshots is taken out before judging:
 * - `login` and `principal-logins`: one login record per login family, at most 64 live per
 *   principal (a new login beyond ends the oldest). The churn logs in with only ACCOUNTS
 *   accounts, so the cap (64 × ACCOUNTS records) is reached in the first minute and the
 *   count levels off during the warm-up.
 * - `revoked-family`: the oldest login a new one ends beyond the cap has its family revoked;
 *   the marker is kept until the family's refresh token would expire (days).
 * - `used-jwt`: a marker per upgraded JWT, kept until the JWT expires (plus the clock skew).
 *   Access tokens live 1 minute here, so the markers reach a steady state within the soak.
 * - `udp-session`: a session's UDP index entry, kept until its session access token
 *   expires (`session:access-minutes`, 60 by default) or its pair is revoked or refreshed.
 * The store's entries are counted by namespace at both snapshots (`store-entries`), and
 * each namespace is weighed in the heap snapshots (its keys, values and what they hold).
 * A namespace is taken out only while its bound holds at the second snapshot (no entry
 * without an expiry or living longer than its bound, at most 64 logins per principal);
 * otherwise its growth counts like any other. What is left, projected per hour, must stay
 * under 1 MB/h (about 55 bytes per churn cycle at 5 cycles per second): a leak of
 * ~100 bytes per cycle anywhere else, or in one of these namespaces beyond its bound,
 * still shows as GROWTH TREND.
  */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { postJson, upgradeAll } from '../lib/http-client.js';
import { heapDiff } from '../lib/heap-diff.js';
import { formatMachineLoad, watchMachineLoad } from '../lib/machine-load.js';
import { startGameServer } from '../lib/server-handle.js';
import { openTcp, openUdp } from '../lib/socket-clients.js';
import { formatServerLog, int, linearFit, mb, signed, sleep } from '../lib/stats.js';
import { HANDLE_TREND_MIN_R2, HANDLES_PER_HOUR_LIMIT, handlesGrew } from '../lib/targets.js';
import { closeSockets, moveDriver, openSockets } from '../lib/ws-load.js';

const PASSWORD = 'soak test password 1234';
/**
 * The trend is fitted over the second half of the run: in the first minutes V8 keeps
 * compiling and optimising (code objects, deoptimisation data), which grows the heap
 * without any leak — a heap-snapshot diff of such a run shows only code objects.
 */
const TREND_FROM = 0.5;
/** Shorter soaks (a quick run) still sit in the warm-up: their slope is shown but not judged. */
const MIN_MINUTES_TO_JUDGE = 5;
/** Minutes of extra load between the two heap snapshots after the sampled soak. */
function diffMinutes(minutes) {
  return Math.max(0.5, Math.min(2, minutes * 0.2));
}

/**
 * The verdict's limit on application objects retained, projected per hour: 1 MB/h is
 * about 55 bytes per churn cycle at 5 cycles per second. The heap-after-GC slope is
 * shown too, but it also counts V8's own compiled code and metadata, which keep
 * growing slowly for many minutes, so the leak test is the snapshot diff.
 */
const RETAINED_PER_HOUR_LIMIT = 2 ** 20;
/**
 * Churn accounts: few, so the login cap (64 per principal, 320 records here) is reached
 * at 5 cycles per second in about a minute, well inside the warm-up.
 */
const ACCOUNTS = 5;
const LOGINS_PER_PRINCIPAL = 64;
/** How long the load pauses before each heap snapshot, for requests in flight to be answered. */
const PAUSE_BEFORE_SNAPSHOT_MS = 1000;

/**
 * The store namespaces whose growth the verdict takes out, with the bound each keeps by
 * design and the check that the bound holds (`all`: every namespace's counts at the second
 * snapshot; `lifetimes`: the server's configured token lifetimes).
 */
const BOUNDED = {
  login: {
    bound: `at most ${LOGINS_PER_PRINCIPAL} live logins per principal`,
    holds: (ns, all) => ns.noExpiry === 0 && ns.count <= LOGINS_PER_PRINCIPAL * (all['principal-logins']?.count ?? 0),
  },
  'principal-logins': {
    bound: `one set per principal of at most ${LOGINS_PER_PRINCIPAL} login families`,
    holds: (ns) => ns.noExpiry === 0 && ns.maxMembers <= LOGINS_PER_PRINCIPAL,
  },
  'used-jwt': {
    bound: 'each until its JWT expires plus the clock skew (access-token-minutes, clock-skew-seconds)',
    holds: (ns, _all, t) => ns.noExpiry === 0 && ns.maxRemainingMs <= t.accessTokenMs + t.clockSkewMs,
  },
  'revoked-family': {
    bound: "each until the family's last JWT expires plus the clock skew (refresh-token-days)",
    holds: (ns, _all, t) => ns.noExpiry === 0 && ns.maxRemainingMs <= t.loginTokenMs + t.clockSkewMs,
  },
  'udp-session': {
    bound: 'each until its session access token expires (session:access-minutes)',
    holds: (ns, _all, lifetimes) => ns.noExpiry === 0 && ns.maxRemainingMs <= lifetimes.sessionAccessMs,
  },
};

/**
 * The store's part of the heap growth: per namespace, entries counted by the server and
 * bytes weighed in the snapshots at both ends; `excluded`: the bytes of namespaces kept by
 * design whose bound held at the end. Without entry details (Redis, whose entries are not
 * in the server's heap) nothing is excluded.
 */
function storeGrowth(entries, heapStore) {
  const [first, last] = entries;
  const names = [...new Set([...Object.keys(first.namespaces), ...Object.keys(last.namespaces)])].sort();
  const namespaces = names.map((name) => {
    const a = first.namespaces[name] ?? { count: 0 };
    const b = last.namespaces[name] ?? { count: 0, noExpiry: 0, maxRemainingMs: 0, maxMembers: 0 };
    const bytes = heapStore?.before && heapStore.after ? (heapStore.after[name]?.bytes ?? 0) - (heapStore.before[name]?.bytes ?? 0) : undefined;
    const rule = BOUNDED[name];
    const boundHolds = rule && last.detail ? rule.holds(b, last.namespaces, last.lifetimes) : undefined;
    return { name, before: a.count, after: b.count, bytes, bound: rule?.bound, boundHolds, end: b };
  });
  const excluded = namespaces.filter((n) => n.boundHolds && n.bytes !== undefined).reduce((sum, n) => sum + n.bytes, 0);
  return { provider: last.provider, namespaces, excluded };
}

function counter() {
  const counts = {};
  return { counts, add: (key) => (counts[key] = (counts[key] ?? 0) + 1) };
}

/** One churn cycle; resolves 'ok' or the reason it failed. */
async function churnCycle(server, n) {
  const login = await postJson(`${server.http}/auth/login/unamepwd`, { username: `soak-${n % ACCOUNTS}`, password: PASSWORD });
  if (login.status !== 200) return `login ${login.status}`;
  const jwt = login.json.accessToken;
  const upgrade = await postJson(`${server.http}/auth/upgrade`, { token: jwt }, jwt);
  if (upgrade.status !== 200) return `upgrade ${upgrade.status}`;
  const session = upgrade.json.accessToken;
  const [ws] = await openSockets(server.wsUrl, [session]);
  const wsClosed = new Promise((resolve) => ws.once('close', (code) => resolve(code)));
  const tcp = await openTcp(server.tcpPort, session);
  const wsReply = new Promise((resolve) => ws.once('message', (data) => resolve(JSON.parse(data.toString()))));
  ws.send(JSON.stringify({ id: 1, portal: '/game', gate: 'move', data: { x: n, y: 1 } }));
  const [wsMove, tcpMove] = await Promise.all([wsReply, tcp.request('/game', 'move', { x: n, y: 2 })]);
  if (!wsMove.ok || !tcpMove.ok) return 'move refused';
  const logout = await postJson(`${server.http}/auth/logout`, undefined, session);
  if (logout.status !== 204) return `logout ${logout.status}`;
  const closedBy = await Promise.race([Promise.all([wsClosed, tcp.closed]), sleep(3000).then(() => 'timeout')]);
  if (closedBy === 'timeout') {
    ws.terminate();
    await tcp.close();
    return 'sockets not closed by logout';
  }
  return closedBy[0] === 4401 ? 'ok' : `ws closed ${closedBy[0]}`;
}

async function anonymousCycle(server) {
  const [ws] = await openSockets(server.wsUrl, [undefined]);
  const reply = new Promise((resolve) => ws.once('message', (data) => resolve(JSON.parse(data.toString()))));
  ws.send('{"id":1,"portal":"/game","gate":"ping"}');
  const answer = await reply;
  await closeSockets([ws]);
  return answer.ok && answer.data === 'pong' ? 'ok' : 'ping refused';
}

function trend(samples, key, fromMin) {
  const used = samples.filter((s) => s.tMin >= fromMin);
  const fit = linearFit(used.map((s) => s.tMin), used.map((s) => s[key]));
  const mean = used.reduce((n, s) => n + s[key], 0) / Math.max(1, used.length);
  return { slopePerMin: fit.slope, r2: fit.r2, mean, first: used[0]?.[key], last: used.at(-1)?.[key] };
}

/**
 * @param {{ minutes: number, sampleS: number, provider?: 'inmemory'|'redis', redisUrl?: string, redisPid?: number,
 *   wsClients?: number, tcpClients?: number, udpClients?: number, rate?: number, churnPerSecond?: number,
 *   heapSnapshotDir?: string, pinning?: string }} options  `heapSnapshotDir`: keep the two heap snapshots there (default: a temporary directory, removed);
 *   `pinning`: how server and generator were placed, for the report.
 *   The run lasts `minutes` plus up to 2 minutes for the snapshots.
 */
export async function runSoak(options) {
  const { minutes, sampleS, provider = 'inmemory', redisUrl, redisPid, wsClients = 500, tcpClients = 20, udpClients = 20, rate = 5, churnPerSecond = 5, heapSnapshotDir, pinning } = options;
  const server = await startGameServer({ provider, redisUrl, workFactor: 4, accessTokenMinutes: 1, shed: false });
  const churn = counter();
  const steady = counter();
  const intervals = [];
  try {
    await server.call('accounts', { prefix: 'soak-', count: ACCOUNTS, password: PASSWORD });
    // Before any client connects: what the server holds with nobody on it.
    const idle = await server.call('stats', { gc: true });
    const steadyCount = wsClients + tcpClients + udpClients;
    const sessions = (await upgradeAll(server.http, await server.call('jwts', { prefix: 'steady-', count: steadyCount }))).map((s) => s.accessToken);
    const sockets = await openSockets(server.wsUrl, sessions.slice(0, wsClients));
    const tcps = await Promise.all(sessions.slice(wsClients, wsClients + tcpClients).map((t) => openTcp(server.tcpPort, t)));
    const udps = await Promise.all(sessions.slice(wsClients + tcpClients).map((t) => openUdp(server.udpPort, t)));

    const driver = moveDriver(sockets, { rate });
    driver.start();
    driver.measure();
    let step = 0;
    let paused = false;
    intervals.push(setInterval(() => {
      if (paused) return;
      step++;
      for (const client of [...tcps, ...udps]) {
        client.request('/game', 'move', { x: step % 100, y: 1 }).then((r) => steady.add(r.ok ? 'ok' : `refused ${r.error?.code}`), () => steady.add('no reply'));
      }
    }, 1000 / rate));
    let cycles = 0;
    let inFlight = 0;
    intervals.push(setInterval(() => {
      if (paused) return;
      for (let i = 0; i < churnPerSecond && inFlight < churnPerSecond * 10; i++) {
        inFlight += 2;
        const n = cycles++;
        churnCycle(server, n).catch((e) => `threw ${e?.message}`).then((outcome) => (churn.add(outcome), inFlight--));
        anonymousCycle(server).catch((e) => `threw ${e?.message}`).then((outcome) => (churn.add(`anonymous ${outcome}`), inFlight--));
      }
    }, 1000));

    const samples = [];
    const began = performance.now();
    const machine = watchMachineLoad({ server: server.pid, generator: process.pid, redis: redisPid });
    const sample = async () => {
      const s = await server.call('stats', { gc: true });
      samples.push({ tMin: (performance.now() - began) / 60_000, rss: s.rss, heapUsed: s.heapUsed, handles: s.handles, resources: s.resources, connections: s.connections });
    };
    const snapshotDir = heapSnapshotDir ?? mkdtempSync(join(tmpdir(), 'portcullis-soak-'));
    const snapshots = [];
    const storeEntries = [];
    const cyclesAt = [];
    // A snapshot stops the server's event loop for seconds: the load pauses around it, so
    // requests do not pile up behind it and arrive as one burst (which the move rate limit
    // would refuse) or time out. Objects retained by the load between the snapshots still count.
    const snapshot = async (label) => {
      paused = true;
      driver.pause();
      await sleep(PAUSE_BEFORE_SNAPSHOT_MS);
      cyclesAt.push(cycles);
      storeEntries.push(await server.call('store-entries'));
      snapshots.push(await server.call('heap-snapshot', { file: join(snapshotDir, `soak-${label}.heapsnapshot`) }));
      paused = false;
      driver.resume();
    };
    const fromMin = minutes * TREND_FROM;
    await sample();
    while (performance.now() - began < minutes * 60_000) {
      await sleep(Math.min(sampleS * 1000, minutes * 60_000 - (performance.now() - began)));
      await sample();
    }
    // The leak check runs after the sampled soak, under the same load: writing a snapshot
    // raises the server's RSS for minutes, which would bend the RSS slope above.
    await snapshot('start');
    const diffStart = performance.now();
    await sleep(diffMinutes(minutes) * 60_000);
    await snapshot('end');
    const retainedMin = (performance.now() - diffStart) / 60_000;
    const machineLoad = machine.stop();
    for (const timer of intervals.splice(0)) clearInterval(timer);
    const ws = await driver.stop();
    const drainUntil = performance.now() + 10_000;
    while (inFlight > 0 && performance.now() < drainUntil) await sleep(50);
    await closeSockets(sockets);
    await Promise.all([...tcps.map((c) => c.close()), ...udps.map((c) => c.close())]);
    await sleep(500);
    const after = await server.call('stats', { gc: true });
    // Read the snapshots only now: parsing them takes this process seconds, which would
    // stall the load it generates.
    const { store: heapStore, ...retained } = heapDiff(snapshots[0], snapshots[1]);
    const store = storeGrowth(storeEntries, heapStore);
    if (!heapSnapshotDir) rmSync(snapshotDir, { recursive: true, force: true });

    const churnFailures = Object.entries(churn.counts).filter(([k]) => !/(^| )ok$/.test(k)).reduce((n, [, v]) => n + v, 0);
    const steadyFailures = Object.entries(steady.counts).filter(([k]) => k !== 'ok').reduce((n, [, v]) => n + v, 0);
    const heap = trend(samples, 'heapUsed', fromMin);
    const handles = trend(samples, 'handles', fromMin);
    const retainedPerHour = (retained.bytes / retainedMin) * 60;
    const netPerHour = ((retained.bytes - store.excluded) / retainedMin) * 60;
    return {
      name: `soak-${provider}`,
      provider,
      minutes,
      sampleS,
      load: { wsClients, tcpClients, udpClients, rate, churnPerSecond },
      requests: { ws: ws.windowReplies, tcpUdp: steady.counts.ok ?? 0 },
      errors: ws.errorReplies + ws.mismatched + ws.unexpectedCloses + ws.missing + steadyFailures + churnFailures + Math.max(0, inFlight),
      errorDetail: { ws: { errorReplies: ws.errorReplies, errorCodes: ws.errorCodes, mismatched: ws.mismatched, unexpectedCloses: ws.unexpectedCloses, missing: ws.missing }, tcpUdp: steady.counts, churn: churn.counts, churnStillRunning: inFlight },
      churnCycles: cycles,
      samples: samples.map((s) => ({ tMin: Number(s.tMin.toFixed(3)), rss: s.rss, heapUsed: s.heapUsed, handles: s.handles, resources: s.resources, connections: s.connections })),
      trendFromMin: fromMin,
      trends: { rss: trend(samples, 'rss', fromMin), heapUsed: heap, handles },
      retained: { ...retained, perHour: retainedPerHour, fromMin: minutes, minutes: retainedMin, net: retained.bytes - store.excluded, netPerHour, churnCycles: cyclesAt[1] - cyclesAt[0] },
      store,
      verdict: { judged: minutes >= MIN_MINUTES_TO_JUDGE, noGrowth: netPerHour < RETAINED_PER_HOUR_LIMIT && !handlesGrew(handles, { idle: idle.handles, afterClose: after.handles }) },
      heapSnapshots: heapSnapshotDir ? snapshots : [],
      idle: { handles: idle.handles },
      afterClose: { handles: after.handles, connections: after.connections, heapUsed: after.heapUsed, rss: after.rss },
      serverLogged: after.problems,
      machineLoad,
      pinning,
    };
  } finally {
    for (const timer of intervals) clearInterval(timer);
    await server.close();
  }
}


function formatStore(r) {
  if (!r.store) return [];
  const kb = (n) => (n === undefined ? '' : `, ${signed(n / 1024, 1, 'KB')}`);
  const rows = r.store.namespaces.filter((n) => n.after !== n.before || n.bytes > 1024 || n.bytes < -1024 || n.bound);
  const cycles = r.retained.churnCycles;
  const perCycle = cycles > 0 ? ` = ${signed(r.retained.net / cycles, 0, 'bytes')} per churn cycle (${int(cycles)} cycles)` : '';
  return [
    `    store entries   by namespace at the two snapshots (${r.store.provider}): ${rows.map((n) => `${n.name} ${int(n.before)} → ${int(n.after)}${kb(n.bytes)}`).join(' · ') || 'no change'}`,
    ...rows
      .filter((n) => n.bound)
      .map((n) => `      kept by design  ${n.name}: ${n.bound} — ${n.boundHolds === undefined ? 'not checked (no entry details), not taken out' : n.boundHolds ? 'bound holds, taken out' : 'BOUND EXCEEDED, counted as growth'}`),
    `    net retained    ${signed(r.retained.net / 1024, 1, 'KB')} after taking out ${signed(r.store.excluded / 1024, 1, 'KB')} of entries kept by design → ${signed(r.retained.netPerHour / 2 ** 20, 3, 'MB/h')}${perCycle}`,
  ];
}

/** The printed report. */
export function formatSoak(r) {
  const { rss, heapUsed, handles } = r.trends;
  const l = r.load;
  const line = (label, t, fmt, unit) =>
    `    ${label.padEnd(15)} ${fmt(t.first)} → ${fmt(t.last)} · slope ${unit(t.slopePerMin)} (r² ${t.r2.toFixed(2)}) · ${unit(t.slopePerMin * 60).replace('/min', '/h')} projected`;
  const mbPerMin = (n) => signed(n / 2 ** 20, 3, 'MB/min');
  const perMin = (n) => signed(n, 2, '/min');
  return [
    `(c) soak: ${r.minutes} min at moderate load — ${r.provider === 'redis' ? 'Redis store' : 'in-memory store'}`,
    `    load            ${l.wsClients} WebSocket + ${l.tcpClients} TCP + ${l.udpClients} UDP players sending move at ${l.rate}/s each (${int((l.wsClients + l.tcpClients + l.udpClients) * l.rate)} req/s);`,
    `                    churn ${l.churnPerSecond}/s: login → upgrade → WS + TCP connect → move → logout (sockets closed by revocation), plus ${l.churnPerSecond}/s anonymous WS connect → ping → close`,
    `    requests        ${int(r.requests.ws + r.requests.tcpUdp)} steady replies, ${int(r.churnCycles)} churn cycles; errors ${r.errors}${r.errors ? ` ${JSON.stringify(r.errorDetail)}` : ''}`,
    `    samples         ${r.samples.length}, every ${r.sampleS} s, after a full GC; slopes fitted from minute ${r.trendFromMin.toFixed(2)}`,
    line('RSS', rss, mb, mbPerMin),
    line('heap after GC', heapUsed, mb, mbPerMin),
    line('active handles', handles, (n) => String(n), perMin),
    `    retained        application objects between heap snapshots at minutes ${r.retained.fromMin.toFixed(1)} and ${(r.retained.fromMin + r.retained.minutes).toFixed(1)} (same load): ${signed(r.retained.bytes / 1024, 1, 'KB')}, ${signed(r.retained.count, 0, 'objects')} → ${signed(r.retained.perHour / 2 ** 20, 3, 'MB/h')}${r.retained.top.length ? `; grew most: ${r.retained.top.map((t) => `${t.name} ${signed(t.bytes / 1024, 1, 'KB')}`).join(', ')}` : ''}`,
    ...formatStore(r),
    `    verdict         ${!r.verdict.judged ? `not judged: under ${MIN_MINUTES_TO_JUDGE} min the heap is still warming up` : r.verdict.noGrowth ? 'no growth trend' : 'GROWTH TREND'} (limits: application objects net of store entries kept by design < 1 MB/h, handles < ${HANDLES_PER_HOUR_LIMIT}/h where the samples follow the line, r² ≥ ${HANDLE_TREND_MIN_R2}, and none left after every client closed)`,
    ...(r.heapSnapshots.length ? [`    heap snapshots  ${r.heapSnapshots.join(', ')}`] : []),
    `    after close     ${r.afterClose.handles} handles${r.idle ? ` (${r.idle.handles} before any client connected)` : ""}, connections ${JSON.stringify(r.afterClose.connections)}; server log ${formatServerLog(r.serverLogged)}`,
    `    machine         ${formatMachineLoad(r.machineLoad)}`,
    `    pinning         ${r.pinning ?? 'not recorded'}`,
  ].join('\n');
}
