#!/usr/bin/env node
/**
 * `npm run loadtest`: load tests of the example game server, each server in its
 * own child process so the load generator's CPU does not count against it.
 *
 *   (a) ws     N authenticated WebSocket clients sending `move` (in-memory store, then Redis), after
 *              the control: a bare `ws` server with no authentication, driven and pinned the same way;
 *              provider `redis-fleet` (in the default list since 2026-11-29) spreads the clients over
 *              --fleet-servers (3) server processes on one Redis and reports each one's CPU and the total
 *   (b) storm  a login storm at bcrypt cost 11, event-loop delay measured in the server
 *   (c) soak   minutes of moderate load, RSS / heap / handles sampled, growth slope fitted
 *   (d) overload  twice the server's measured capacity for 10 s, then half: answered within 1 s,
 *              refusals, latency per phase, and how long p99 takes to get back under 50 ms; and
 *              --revoked (100) more players logged out meanwhile, none of whom may be served after it;
 *              on each store of --overload-stores (inmemory,redis); a request answered `unavailable` counts as an error
 *
 * The server process is pinned to one core and this process (the load generator, and a
 * redis-server it starts) to another with taskset, so the generator cannot take the
 * server's CPU; without taskset or with one usable core it warns and runs unpinned.
 * Prints the three reports, merges them into loadtest/results/latest.json (reports
 * not run keep their previous numbers) and rewrites the block of
 * docs/performance.md between the loadtest markers. Exits 1 when a report
 * counted errors or missed a target (lib/targets.js: p99, event-loop delay, answers within 1 s,
 * recovery, the storm's event loop, the soak's growth). Traffic goes to 127.0.0.1 only; every
 * loop is bounded by its duration.
 *
 * Usage: npm run loadtest [-- [ws] [storm] [soak] [overload] [--quick] [--clients=N] [--duration=S] [--rate=R]
 *          [--providers=control,inmemory,redis,redis-fleet] [--fleet-servers=N] [--logins=N] [--storm-rounds=N] [--work-factor=N]
 *          [--soak-minutes=M] [--sample-seconds=S] [--soak-store=inmemory|redis]
 *          [--capacity=R] [--revoked=N] [--probe-seconds=S] [--steady-seconds=S] [--overload-seconds=S] [--recovery-seconds=S]
 *          [--overload-stores=inmemory,redis]
 *          [--server-cpu=N] [--generator-cpu=N] [--semi-space-mb=N] [--no-pin] [--no-save] [--docs-only]]
 * Every option also reads from the environment: LOADTEST_CLIENTS, LOADTEST_DURATION_S, LOADTEST_RATE,
 * LOADTEST_PROVIDERS, LOADTEST_FLEET_SERVERS, LOADTEST_LOGINS, LOADTEST_STORM_ROUNDS, LOADTEST_WORK_FACTOR,
 * LOADTEST_SOAK_MINUTES, LOADTEST_SAMPLE_S, LOADTEST_SOAK_STORE, LOADTEST_CAPACITY, LOADTEST_REVOKED, LOADTEST_PROBE_S,
 * LOADTEST_STEADY_S, LOADTEST_OVERLOAD_S, LOADTEST_RECOVERY_S, LOADTEST_OVERLOAD_STORES, LOADTEST_SERVER_CPU, LOADTEST_GENERATOR_CPU,
 * LOADTEST_SEMI_SPACE_MB, LOADTEST_NO_PIN=1, LOADTEST_QUICK=1. `--capacity=0` (the default) measures the capacity first.
 * `--semi-space-mb` (64): the servers run with `--max-semi-space-size` set to it, as docs/performance.md
 * recommends for a server of thousands of sockets; 0 runs them with Node's default young generation.
 * LOADTEST_HEAP_SNAPSHOTS=<dir> keeps the soak's two server heap snapshots there (open them in Chrome
 * DevTools to see what grew); otherwise they go to a temporary directory and are removed.
 * LOADTEST_WS_CLIENT=ws drives the sockets with the `ws` package's client instead of
 * lib/lean-websocket.js (for comparison: it costs the generator about a third more CPU per message).
 * `--quick`: 10 s WebSocket runs, a 1-minute soak sampled every 5 s, an overload of 5 s with 3 s
 * of steady load before and 10 s of recovery after. `--no-save`: print only, keep
 * latest.json and docs/performance.md as they are. `--docs-only`: run nothing, rewrite the block of
 * docs/performance.md from latest.json.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describeMachine, machineLine } from '../bench/lib/bench-report.js';
import { findRedisServer, startRedis } from '../bench/lib/redis.js';
import { replaceLoadtestBlock } from './lib/loadtest-report.js';
import { overloadShortfall, overloadTargetsMissed, soakTargetsMissed, stormTargetsMissed, wsTargetsMissed } from './lib/targets.js';
import { formatLoginStorm, runLoginStorm } from './scenarios/login-storm.js';
import { pinProcess, planPinning } from '../bench/lib/cpu-pinning.js';
import { setServerCpu, setServerFlags } from './lib/server-handle.js';
import { formatOverload, revocationErrors, runOverload } from './scenarios/overload.js';
import { formatSoak, runSoak } from './scenarios/soak.js';
import { formatWsFleet, runWsFleet } from './scenarios/ws-fleet.js';
import { formatWsMove, runWsMove } from './scenarios/ws-move.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = dirname(here);
const resultsFile = join(here, 'results', 'latest.json');
const docFile = join(root, 'docs', 'performance.md');
const TOPICS = ['ws', 'storm', 'soak', 'overload'];

const OPTIONS = {
  clients: ['LOADTEST_CLIENTS', 5000, Number],
  duration: ['LOADTEST_DURATION_S', 60, Number],
  rate: ['LOADTEST_RATE', 4, Number],
  providers: ['LOADTEST_PROVIDERS', 'control,inmemory,redis,redis-fleet', String],
  'fleet-servers': ['LOADTEST_FLEET_SERVERS', 3, Number],
  logins: ['LOADTEST_LOGINS', 200, Number],
  'storm-rounds': ['LOADTEST_STORM_ROUNDS', 1, Number],
  'work-factor': ['LOADTEST_WORK_FACTOR', 11, Number],
  'soak-minutes': ['LOADTEST_SOAK_MINUTES', 10, Number],
  'sample-seconds': ['LOADTEST_SAMPLE_S', 10, Number],
  'soak-store': ['LOADTEST_SOAK_STORE', 'inmemory', String],
  capacity: ['LOADTEST_CAPACITY', 0, Number],
  revoked: ['LOADTEST_REVOKED', 100, Number],
  'probe-seconds': ['LOADTEST_PROBE_S', 5, Number],
  'steady-seconds': ['LOADTEST_STEADY_S', 5, Number],
  'overload-seconds': ['LOADTEST_OVERLOAD_S', 10, Number],
  'recovery-seconds': ['LOADTEST_RECOVERY_S', 20, Number],
  'overload-stores': ['LOADTEST_OVERLOAD_STORES', 'inmemory,redis', String],
  'server-cpu': ['LOADTEST_SERVER_CPU', 1, Number],
  'generator-cpu': ['LOADTEST_GENERATOR_CPU', 0, Number],
  'semi-space-mb': ['LOADTEST_SEMI_SPACE_MB', 64, Number],
};
const QUICK = { duration: 10, 'soak-minutes': 1, 'sample-seconds': 5, 'probe-seconds': 3, 'steady-seconds': 3, 'overload-seconds': 5, 'recovery-seconds': 10 };

function parseArgs(argv, env) {
  const flags = {};
  const topics = [];
  let quick = /^(1|true|yes)$/i.test(env.LOADTEST_QUICK ?? '');
  let pin = !/^(1|true|yes)$/i.test(env.LOADTEST_NO_PIN ?? '');
  let save = true;
  let docsOnly = false;
  for (const arg of argv) {
    if (arg === '--quick') quick = true;
    else if (arg === '--docs-only') docsOnly = true;
    else if (arg === '--no-save') save = false;
    else if (arg === '--no-pin') pin = false;
    else if (arg.startsWith('--')) {
      const [name, value] = arg.slice(2).split('=', 2);
      if (!(name in OPTIONS) || value === undefined) throw new Error(`unknown option ${arg} (known: ${Object.keys(OPTIONS).map((o) => `--${o}=…`).join(' ')} --quick --no-pin --no-save --docs-only)`);
      flags[name] = value;
    } else if (TOPICS.includes(arg)) topics.push(arg);
    else throw new Error(`unknown load test ${arg} (known: ${TOPICS.join(', ')})`);
  }
  const options = {};
  for (const [name, [variable, fallback, parse]] of Object.entries(OPTIONS)) {
    const raw = flags[name] ?? env[variable] ?? (quick && name in QUICK ? QUICK[name] : fallback);
    const value = parse(raw);
    if (parse === Number && !(Number.isFinite(value) && value >= 0)) throw new Error(`--${name} must be a non-negative number, got ${raw}`);
    options[name] = value;
  }
  return { topics: docsOnly ? [] : topics.length ? topics : TOPICS, options, quick, save, docsOnly, pin };
}

function openFileLimit() {
  try {
    return Number(execFileSync('sh', ['-c', 'ulimit -n'], { encoding: 'utf8' }).trim());
  } catch {
    return Number.NaN;
  }
}

function readResults() {
  try {
    return JSON.parse(readFileSync(resultsFile, 'utf8')).reports ?? {};
  } catch {
    return {};
  }
}

function writeAtomically(file, text) {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(`${file}.tmp`, text);
  renameSync(`${file}.tmp`, file);
}

async function main() {
  const { topics, options, quick, save, docsOnly, pin } = parseArgs(process.argv.slice(2), process.env);
  if (docsOnly) {
    writeAtomically(docFile, replaceLoadtestBlock(readFileSync(docFile, 'utf8'), readResults()));
    console.log(`rewrote the load-test block of ${docFile} from ${resultsFile}`);
    return;
  }
  const overloadStores = options['overload-stores'].split(',').map((p) => p.trim()).filter(Boolean);
  const unknown = overloadStores.filter((store) => store !== 'inmemory' && store !== 'redis');
  if (unknown.length > 0) throw new Error(`--overload-stores takes inmemory and redis, not ${unknown.join(', ')}`);
  const machine = describeMachine();
  console.log(`portcullis load tests · ${machineLine(machine)}`);
  console.log(`running: ${topics.join(', ')}${quick ? ' (quick)' : ''} · ${JSON.stringify(options)}`);
  const placement = planPinning({ pin, serverCpu: options['server-cpu'], generatorCpu: options['generator-cpu'] });
  if (placement.warning) console.warn(`warning: ${placement.warning}; the load generator and the server compete for the same cores`);
  // This process is the load generator; a redis-server started from here inherits its core.
  pinProcess(placement.generatorCpu);
  setServerCpu(placement.serverCpu);
  const semiSpaceMb = options['semi-space-mb'];
  setServerFlags(semiSpaceMb > 0 ? [`--max-semi-space-size=${semiSpaceMb}`] : []);
  const youngGeneration = semiSpaceMb > 0 ? `servers run with --max-semi-space-size=${semiSpaceMb}` : "servers run with Node's default young generation";
  const placed = placement.enabled ? `${placement.line}; redis-server, when used, on the generator's core` : `NOT pinned: ${placement.warning}`;
  const pinning = `${placed}; ${youngGeneration}`;
  console.log(`pinning: ${pinning}\n`);
  const limit = openFileLimit();
  if ((topics.includes('ws') || topics.includes('overload')) && Number.isFinite(limit) && limit < options.clients + 1000) {
    throw new Error(`open-file limit ${limit} is too low for ${options.clients} clients: raise it (ulimit -n ${options.clients + 1000}) or pass --clients`);
  }

  const reports = readResults();
  const printed = [];
  const record = (key, result, text) => {
    console.log(`${text}\n`);
    printed.push(text);
    reports[key] = { measuredAt: new Date().toISOString(), machine, quick, result, text };
  };
  const errors = [];
  /** Targets a report missed (lib/targets.js): printed at the end, and the run exits 1, as for errors. */
  const missed = [];

  if (topics.includes('ws')) {
    for (const provider of options.providers.split(',').map((p) => p.trim()).filter(Boolean)) {
      const onRedis = provider === 'redis' || provider === 'redis-fleet';
      const redis = onRedis ? await startRedisOrSkip() : undefined;
      if (onRedis && !redis) continue;
      try {
        const fleet = { redisUrl: redis?.url, redisPid: redis?.pid, servers: options['fleet-servers'], clients: options.clients, durationS: options.duration, rate: options.rate };
        const result = provider === 'redis-fleet' ? await runWsFleet(fleet) : await runWsMove({ provider, redisUrl: redis?.url, redisPid: redis?.pid, clients: options.clients, durationS: options.duration, rate: options.rate, pinning });
        record(`ws-${provider}`, result, provider === 'redis-fleet' ? formatWsFleet(result) : formatWsMove(result));
        if (result.errors > 0) errors.push(`ws ${provider}: ${result.errors} errors`);
        missed.push(...wsTargetsMissed(result));
      } finally {
        await redis?.stop();
      }
    }
  }
  if (topics.includes('storm')) {
    const result = await runLoginStorm({ logins: options.logins, rounds: options['storm-rounds'], workFactor: options['work-factor'], wsClients: 50, pinning });
    record('storm', result, formatLoginStorm(result));
    if (result.failures + result.webSocket.errors > 0) errors.push(`storm: ${result.failures} failed logins, ${result.webSocket.errors} socket errors`);
    missed.push(...stormTargetsMissed(result));
  }
  if (topics.includes('soak')) {
    const store = options['soak-store'];
    const redis = store === 'redis' ? await startRedisOrSkip() : undefined;
    if (store !== 'redis' || redis) {
      try {
        const heapSnapshotDir = process.env.LOADTEST_HEAP_SNAPSHOTS || undefined;
        const result = await runSoak({ minutes: options['soak-minutes'], sampleS: options['sample-seconds'], provider: store, redisUrl: redis?.url, redisPid: redis?.pid, heapSnapshotDir, pinning });
        record('soak', result, formatSoak(result));
        if (result.errors > 0) errors.push(`soak: ${result.errors} errors`);
        missed.push(...soakTargetsMissed(result));
      } finally {
        await redis?.stop();
      }
    }
  }

  if (topics.includes('overload')) {
    for (const provider of overloadStores) {
      const redis = provider === 'redis' ? await startRedisOrSkip() : undefined;
      if (provider === 'redis' && !redis) continue;
      try {
        const result = await runOverload({
          provider,
          redisUrl: redis?.url,
          redisPid: redis?.pid,
          clients: options.clients,
          revoked: options.revoked,
          capacity: options.capacity,
          probeS: options['probe-seconds'],
          steadyS: options['steady-seconds'],
          overloadS: options['overload-seconds'],
          recoveryS: options['recovery-seconds'],
          pinning,
        });
        const key = provider === 'inmemory' ? 'overload' : `overload-${provider}`;
        record(key, result, formatOverload(result));
        const broken = result.phases.reduce((n, p) => n + p.mismatched, 0);
        if (broken > 0) errors.push(`${key}: ${broken} replies out of order`);
        // A store operation that timed out: under overload a request is to be refused fast, not left to wait on the store.
        const unavailable = result.phases.reduce((n, p) => n + (p.refusals.unavailable ?? 0), 0);
        if (unavailable > 0) errors.push(`${key}: ${unavailable} requests answered unavailable`);
        const revocation = revocationErrors(result.revocations);
        if (revocation > 0) errors.push(`${key}: ${revocation} revocation errors (${result.revocations.violations} violations)`);
        missed.push(...overloadTargetsMissed(result, key));
        const shortfall = overloadShortfall(result, key);
        if (shortfall) console.warn(`not shown: ${shortfall}\n`);
      } finally {
        await redis?.stop();
      }
    }
  }

  if (save) {
    writeAtomically(resultsFile, `${JSON.stringify({ generatedAt: new Date().toISOString(), reports }, null, 2)}\n`);
    if (existsSync(docFile)) writeAtomically(docFile, replaceLoadtestBlock(readFileSync(docFile, 'utf8'), reports));
  }
  console.log(`== the reports of this run ==\n\n${printed.join('\n\n')}\n`);
  if (save) console.log(`wrote ${resultsFile} and the load-test block of docs/performance.md`);
  if (missed.length > 0) console.error(`targets missed: ${missed.join('; ')}`);
  if (errors.length > 0) console.error(`errors: ${errors.join('; ')}`);
  if (missed.length > 0 || errors.length > 0) process.exitCode = 1;
}

async function startRedisOrSkip() {
  const binary = findRedisServer();
  if (!binary) {
    console.warn('!! redis-server not found: the Redis run is SKIPPED (install redis-server or set REDIS_SERVER_BIN)\n');
    return undefined;
  }
  return startRedis(binary);
}

main().catch((error) => {
  console.error(error instanceof Error ? (process.env.LOADTEST_DEBUG ? error.stack : error.message) : error);
  process.exitCode = 1;
});
