/**
 * The shield's own work per request, without sockets: `ShieldEnforcer.decide` on
 * the plans and contexts the HTTP and WebSocket adapters hand it, in CPU ns per call.
 * HTTP cases make a new request context per call as the express adapter does (the
 * credential cut from a fresh header string); gate cases reuse the connection's.
 * Cases: an unshielded plan of each kind (the floors), `@JwtShield` on the in-memory
 * store with a connection memo and without one, `@JwtShield` on Redis with its JWT
 * near cache (answered from the process, no round trip), `@SessionShield` on a
 * near-cache hit and with the near cache off (every call derives the store key,
 * SHA-256 of the token, and reads the in-memory store: the cost of hashing tokens
 * at rest), the key derivation alone, and the invalidation check alone on memory
 * and on the near cache.
 * The containers are built as bench/http.bench.js and bench/lib/ws-bench-server.js
 * build theirs. Each round runs every case for a fixed number of calls, in an order
 * that rotates by round; the table gives the median CPU ns/call with the min–max over rounds.
 *
 * Redis without the near cache cannot be timed here without the round trip deciding
 * the number (every call reads Redis); its row gives the CPU per decision with 64
 * decisions in flight instead, which includes the Redis client's work. The checks of
 * one event-loop turn share one MGET, so the row prices a gathered read, not one per call.
 */
import 'reflect-metadata';
import { performance } from 'node:perf_hooks';
import { container as rootContainer } from 'tsyringe';
import * as core from '@portcullis/core';
import { bearerCredentialOf, readShieldPlan } from '@portcullis/core/transport';
import { pinProcess, planPinning } from './lib/cpu-pinning.js';
import { median, withSpread } from './lib/measure.js';
import { findRedisServer, startRedis } from './lib/redis.js';

const {
  Gate, JwtShield, JwtTokenIssuer, JwtTokenValidator, LOGGER_FACTORY, PORTCULLIS_CONFIG, PORTCULLIS_CONTAINER, Portal, SIGNING_KEY, SessionShield,
  ShieldEnforcer, TokenSessionSync, loadConfig, registerSessionServices, resolveSigningKey, sessionKey, silentLoggerFactory,
} = core;

export const title = 'Shield decision per request, no sockets (ShieldEnforcer.decide, CPU ns per call, one core)';
export const defaults = { rounds: 15, durationMs: 200 };

const KEY = Buffer.from('portcullis-shield-bench-key-0123456789-abcdefghij').toString('base64');

async function stack(env = {}) {
  const config = loadConfig({
    env: { SVC__SECURITY__MODE: 'jwt', SVC__SECURITY__KEY: KEY, SVC__SECURITY__ACCESS_TOKEN_MINUTES: '120', ...env },
    tree: {},
  });
  const container = rootContainer.createChildContainer();
  container.register(PORTCULLIS_CONFIG, { useValue: config });
  container.register(LOGGER_FACTORY, { useValue: silentLoggerFactory });
  container.register(SIGNING_KEY, { useValue: resolveSigningKey(config, silentLoggerFactory.create('bench')) });
  container.register(PORTCULLIS_CONTAINER, { useValue: container });
  const stores = registerSessionServices(container, { keyPrefix: `bench-shield-${process.pid}-${Math.random().toString(36).slice(2, 8)}` });
  await stores.ready();
  return {
    enforcer: container.resolve(ShieldEnforcer),
    issuer: container.resolve(JwtTokenIssuer),
    validator: container.resolve(JwtTokenValidator),
    sessions: container.resolve(TokenSessionSync),
    async close() {
      await container.resolve(TokenSessionSync).close();
      await stores.close();
    },
  };
}

class MeController {
  me() {}
  open() {}
}
JwtShield()(MeController.prototype, 'me', Object.getOwnPropertyDescriptor(MeController.prototype, 'me'));

class BenchPortal {
  open() {}
  shielded() {}
}
for (const name of ['open', 'shielded']) Gate(name)(BenchPortal.prototype, name, Object.getOwnPropertyDescriptor(BenchPortal.prototype, name));
SessionShield(BenchPortal.prototype, 'shielded', Object.getOwnPropertyDescriptor(BenchPortal.prototype, 'shielded'));
Portal('/bench')(BenchPortal);

const ROUTE = Object.freeze({ method: 'GET', path: '/me' });

/**
 * A maker of HTTP request contexts as the express adapter builds them, one per call:
 * the credential cut from the request's `Authorization` header by `bearerCredentialOf`
 * (which also counts the header in the raw headers; a fresh header string each time,
 * as parsed from a socket, so the memo compares strings that are equal but not the
 * same object), and the connection's memo, or a new Map per request without one.
 */
function httpContexts(jwt, perConnectionMemo) {
  const requests = Array.from({ length: 256 }, () => {
    const authorization = Buffer.from(`Bearer ${jwt}`, 'latin1').toString('latin1');
    const rawHeaders = ['Host', '127.0.0.1:3000', 'Connection', 'keep-alive', 'Authorization', authorization, 'Accept', '*/*', 'User-Agent', 'bench'];
    return { headers: { host: '127.0.0.1:3000', connection: 'keep-alive', authorization, accept: '*/*', 'user-agent': 'bench' }, rawHeaders };
  });
  const memo = new Map();
  let i = 0;
  return perConnectionMemo
    ? () => ({ transport: 'http', credential: bearerCredentialOf(requests[i++ & 255]) ?? undefined, clientId: 'conn-1', remoteAddress: '127.0.0.1', route: ROUTE, memo })
    : () => ({ transport: 'http', credential: bearerCredentialOf(requests[i++ & 255]) ?? undefined, clientId: 'conn-1', remoteAddress: '127.0.0.1', route: ROUTE, memo: new Map() });
}

/** A WebSocket gate's context: the connection's credential and memo, the same objects for every message. */
const gateContext = (credential) => {
  const ctx = { transport: 'ws', credential, clientId: 'conn-1', remoteAddress: '127.0.0.1', portal: '/bench', gate: 'shielded', memo: new Map() };
  return () => ctx;
};

/**
 * Calls `c.call()` `n` times; answers the wall and CPU seconds taken (this process's
 * user + system time, which leaves out time the scheduler gave to other processes)
 * and how many answers were promises (awaited: a near-cache entry ran out and the
 * store was asked).
 */
async function loop(c, n) {
  const { call, accept } = c;
  let promised = 0;
  let refused = 0;
  const cpu = process.cpuUsage();
  const started = performance.now();
  for (let i = 0; i < n; i++) {
    let answer = call();
    if (typeof answer?.then === 'function') {
      promised++;
      answer = await answer;
    }
    if (!accept(answer)) refused++;
  }
  const seconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  if (refused > 0) throw new Error(`bench setup: ${c.name}: ${refused} of ${n} answers were not the expected one`);
  return { seconds, cpuSeconds: (used.user + used.system) / 1e6, promised };
}

const allowed = (verdict) => verdict.ok === true;
const notInvalidated = (invalidated) => invalidated === false;

/**
 * A case timing the invalidation check `@JwtShield` makes on every request; when the
 * answer needs the store (a near-cache entry ran out), the store is asked.
 */
function invalidationCase(name, stack, jwt) {
  const claims = stack.validator.validate(jwt, 'access').claims;
  return { group: 'part', name, call: () => stack.sessions.isJwtInvalidatedNow(claims) ?? stack.sessions.isJwtInvalidated(claims), accept: notInvalidated };
}

/** A case timing `enforcer.decide(plan, context())`, the context made as its adapter makes it; `group` names its floor. */
const decideCase = (group, name, enforcer, plan, context) => ({ group, name, call: () => enforcer.decide(plan, context()), accept: allowed });

/** Server CPU µs per decision with `inFlight` decisions outstanding (for answers that always go to the store). */
async function cpuPerAsyncDecision(enforcer, plan, context, total, inFlight = 64) {
  let next = 0;
  const worker = async () => {
    while (next++ < total) {
      const verdict = await enforcer.decide(plan, context());
      if (verdict.ok !== true) throw new Error('bench setup: a Redis-store decision refused');
    }
  };
  const cpu = process.cpuUsage();
  const started = performance.now();
  await Promise.all(Array.from({ length: inFlight }, worker));
  const used = process.cpuUsage(cpu);
  return { cpuMicros: (used.user + used.system) / total, wallMicros: ((performance.now() - started) * 1000) / total };
}

export async function run({ rounds, durationMs, pin = true, serverCpu = 1 }) {
  const plan = planPinning({ pin, serverCpu, generatorCpu: serverCpu === 0 ? 1 : 0 });
  pinProcess(plan.serverCpu);
  const redisBinary = findRedisServer();
  const redis = redisBinary ? await startRedis(redisBinary) : undefined;
  const memory = await stack();
  const memoryNoNear = await stack({ SVC__SECURITY__SESSION__NEAR_CACHE_SECONDS: '0' });
  const onRedis = redis ? { SVC__PERSISTENCE__CACHE__PROVIDER: 'redis', SVC__PERSISTENCE__CACHE__URL: redis.url } : undefined;
  const redisNear = onRedis ? await stack({ ...onRedis, SVC__SECURITY__SESSION__JWT_NEAR_CACHE_SECONDS: '5' }) : undefined;
  const redisPlain = onRedis ? await stack(onRedis) : undefined;
  const notes = [];
  try {
    const jwtPlan = readShieldPlan(MeController, 'me');
    const openPlan = readShieldPlan(MeController, 'open');
    const sessionPlan = readShieldPlan(BenchPortal, 'shielded');
    const openGatePlan = readShieldPlan(BenchPortal, 'open');
    const jwt = memory.issuer.issueLoginPair('player-42', { name: 'alice' }).accessToken;
    const session = (await memory.sessions.upgrade(memory.issuer.issueLoginPair('player-43', { name: 'bob' }).accessToken)).accessToken;
    const sessionNoNear = (await memoryNoNear.sessions.upgrade(memoryNoNear.issuer.issueLoginPair('player-46', { name: 'erin' }).accessToken)).accessToken;
    const redisJwt = redisNear?.issuer.issueLoginPair('player-44', { name: 'carol' }).accessToken;
    const cases = [
      decideCase('http', 'HTTP: unshielded plan (floor: making the request context)', memory.enforcer, openPlan, httpContexts(jwt, true)),
      decideCase('http', 'HTTP: @JwtShield, in-memory store, connection memo', memory.enforcer, jwtPlan, httpContexts(jwt, true)),
      decideCase('http', 'HTTP: @JwtShield, in-memory store, no memo (signature every call)', memory.enforcer, jwtPlan, httpContexts(jwt, false)),
      ...(redisNear ? [decideCase('http', 'HTTP: @JwtShield, Redis store, jwt-near-cache-seconds 5, connection memo', redisNear.enforcer, jwtPlan, httpContexts(redisJwt, true))] : []),
      decideCase('gate', 'gate: unshielded (floor)', memory.enforcer, openGatePlan, gateContext(session)),
      decideCase('gate', 'gate: @SessionShield, in-memory store, near-cache hit', memory.enforcer, sessionPlan, gateContext(session)),
      decideCase('gate', 'gate: @SessionShield, in-memory store, near cache off (SHA-256 store key + store read per call)', memoryNoNear.enforcer, sessionPlan, gateContext(sessionNoNear)),
      { group: 'part', name: 'part of it: sessionKey(token), the SHA-256 store key alone', call: () => sessionKey(session), accept: (key) => key.length === 43 },
      invalidationCase('part of it: TokenSessionSync.isJwtInvalidatedNow, in-memory store', memory, jwt),
      ...(redisNear ? [invalidationCase('part of it: TokenSessionSync.isJwtInvalidatedNow, Redis near cache', redisNear, redisJwt)] : []),
    ];
    // Warm-up: double the call count until a loop takes 50 ms, so the code is optimised;
    // then size each case's rounds from the fastest of three more timed loops on the warm code.
    for (const c of cases) {
      let n = 500;
      let took = 0;
      while (took < 0.05) {
        n *= 2;
        took = (await loop(c, n)).seconds;
      }
      // The fastest of three: a loop the scheduler interrupted would size the rounds too small.
      took = Infinity;
      for (let i = 0; i < 3; i++) took = Math.min(took, (await loop(c, n)).seconds);
      c.calls = Math.max(1000, Math.round((n * durationMs) / 1000 / took));
      c.ns = [];
      c.wallNs = [];
      c.promised = 0;
    }
    for (let r = 0; r < rounds; r++) {
      for (let k = 0; k < cases.length; k++) {
        const c = cases[(k + r) % cases.length];
        const { seconds, cpuSeconds, promised } = await loop(c, c.calls);
        c.ns.push((cpuSeconds * 1e9) / c.calls);
        c.wallNs.push((seconds * 1e9) / c.calls);
        c.promised += promised;
      }
    }
    const floors = Object.fromEntries(['http', 'gate'].map((group) => [group, cases.find((c) => c.group === group)]));
    const over = (c) => (floors[c.group] && floors[c.group] !== c ? Math.round(median(c.ns) - median(floors[c.group].ns)) : '–');
    const rows = cases.map((c) => ({
      case: c.name,
      'CPU ns/call': withSpread(c.ns, 0),
      'over floor ns': over(c),
      'wall ns/call': Math.round(median(c.wallNs)),
      'calls per round': c.calls,
      'answered by a promise': c.promised,
    }));
    if (redisPlain) {
      const context = httpContexts(redisPlain.issuer.issueLoginPair('player-45', { name: 'dave' }).accessToken, true);
      await cpuPerAsyncDecision(redisPlain.enforcer, jwtPlan, context, 2000);
      const samples = [];
      for (let r = 0; r < Math.min(rounds, 5); r++) samples.push(await cpuPerAsyncDecision(redisPlain.enforcer, jwtPlan, context, 5000));
      const cpuNs = samples.map((s) => s.cpuMicros * 1000);
      rows.push({
        case: 'HTTP: @JwtShield, Redis store, no near cache (CPU, 64 in flight, their MGETs gathered)',
        'CPU ns/call': withSpread(cpuNs, 0),
        'over floor ns': Math.round(median(cpuNs) - median(floors.http.ns)),
        'wall ns/call': Math.round(median(samples.map((s) => s.wallMicros)) * 1000),
        'calls per round': 5000,
        'answered by a promise': 5000 * samples.length,
      });
      notes.push('In the last row every call waits for Redis: its CPU is this process\'s per decision (the Redis client\'s encoding and parsing included, redis-server not) with 64 decisions in flight, whose checks share the MGETs of their event-loop turn, and its wall time is the loop\'s elapsed time ÷ calls, not one call\'s latency.');
    } else {
      notes.push('redis-server not found: the Redis rows are missing from this run.');
    }
    notes.push(
      `${plan.enabled ? `This process pinned to core ${plan.serverCpu} (taskset).` : `Not pinned: ${plan.warning}.`} Each case is calibrated to about ${durationMs} ms of calls per round and keeps that call count; ${rounds} rounds, the order rotating by round. "CPU ns/call" is this process\'s CPU time (user + system, so garbage collection is in it) per call: median over rounds (min–max); unlike wall time it leaves out the time the scheduler gave to other processes. "wall ns/call" is the median wall time.`,
      'Session tokens are stored under their SHA-256 digest: a near-cache hit is keyed by the token in this process and derives nothing; the near-cache-off row derives the digest and reads the in-memory store on every call, and "sessionKey(token)" times the digest alone.',
      'The "part of it" rows time the invalidation check alone (expiry, used jti, family, principal cut-off, store epoch), which every @JwtShield decision makes after its memoised signature check: with the in-memory store it reads the store\'s Map, on Redis the JWT near cache.',
      'The contexts are made as the adapters make them: for HTTP a new context per call, its credential cut by bearerCredentialOf (which also counts the header in the raw headers) from a fresh Authorization header string, equal to the memo\'s but not the same object,, with the connection\'s memo or a new Map per request; for a WebSocket gate the connection\'s context. Each floor row (an unshielded plan) makes its context the same way, so "over floor" is the shield\'s own work: HTTP rows against the HTTP floor, gate rows against the gate floor. "answered by a promise" counts calls whose near cache (5 s, jittered) had just run out, so the store was asked: those calls are in the time too, and are rare.',
    );
    return { columns: ['case', 'CPU ns/call', 'over floor ns', 'wall ns/call', 'calls per round', 'answered by a promise'], rows, notes };
  } finally {
    await Promise.all([memory, memoryNoNear, redisNear, redisPlain].filter(Boolean).map((s) => s.close()));
    await redis?.stop();
  }
}
