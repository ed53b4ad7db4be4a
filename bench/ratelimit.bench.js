/**
 * The `@RateLimit` check per message, without sockets: `ShieldEnforcer.decide` on an
 * open gate with and without a `@RateLimit`, in memory and on a real Redis, against
 * rate-limiter-flexible (RateLimiterMemory, RateLimiterRedis) doing the same count in
 * the same run. CPU ns per call of this process (user + system), median over rounds.
 *
 * On Redis, portcullis claims part of the limit per INCRBY and spends it locally (in a
 * caller's first window a tenth; later windows size the claim by the use before), so
 * its cost depends on the limit: the rows use limit 20 (one claim per 2 messages) and
 * limit 1000 (one claim per 100), counted by address (a `connection` counter never
 * leaves its server). Each caller sends exactly its
 * limit and the next caller takes over, so every call is within the limit and every
 * claim is real. The "over the limit" row is a caller whose window Redis already
 * reported spent: refused without a round trip. rate-limiter-flexible's Redis limiter
 * runs one EVAL per call.
 */
import 'reflect-metadata';
import { performance } from 'node:perf_hooks';
import { createClient } from '@redis/client';
import { RateLimiterMemory, RateLimiterRedis } from 'rate-limiter-flexible';
import { container as rootContainer } from 'tsyringe';
import * as core from '@portcullis/core';
import { readShieldPlan } from '@portcullis/core/transport';
import { pinProcess, planPinning } from './lib/cpu-pinning.js';
import { median, ratio, withSpread } from './lib/measure.js';
import { findRedisServer, startRedis } from './lib/redis.js';

const { AllowAnonymous, Gate, Portal, RateLimit, ShieldEnforcer, registerPortcullis, loadConfig, silentLoggerFactory } = core;

export const title = '@RateLimit check per message, no sockets (ShieldEnforcer.decide, CPU ns per call, one core)';
export const defaults = { rounds: 7, durationMs: 200 };

const KEY = Buffer.from('portcullis-ratelimit-bench-key-0123456789-abcdef').toString('base64');

class BenchPortal {
  open() {}
  huge() {}
  twenty() {}
  thousand() {}
}
const method = (name) => [BenchPortal.prototype, name, Object.getOwnPropertyDescriptor(BenchPortal.prototype, name)];
for (const name of ['open', 'huge', 'twenty', 'thousand']) {
  Gate(name)(...method(name));
  AllowAnonymous(...method(name));
}
RateLimit({ limit: 1_000_000_000, windowSeconds: 3600, by: 'connection' })(...method('huge'));
// By address: a `connection` counter never leaves its server, so it would not exercise Redis.
RateLimit({ limit: 20, windowSeconds: 3600, by: 'ip' })(...method('twenty'));
RateLimit({ limit: 1000, windowSeconds: 3600, by: 'ip' })(...method('thousand'));
Portal('/bench')(BenchPortal);

function enforcerOn(env) {
  const config = loadConfig({ env: { SVC__SECURITY__MODE: 'jwt', SVC__SECURITY__KEY: KEY, ...env }, tree: {} });
  const container = rootContainer.createChildContainer();
  const registration = registerPortcullis(container, { config, loggers: silentLoggerFactory, stores: { keyPrefix: `bench-rl-${process.pid}-${Math.random().toString(36).slice(2, 8)}` } });
  return { enforcer: container.resolve(ShieldEnforcer), registration };
}

/** A gate context whose client id and address change every `every` calls (a new caller with a fresh count). */
function callers(every) {
  let n = 0;
  let ctx;
  return () => {
    if (n++ % every === 0) ctx = { transport: 'ws', credential: undefined, clientId: `c${n}-${Math.random()}`, remoteAddress: `a${n}-${Math.random()}`, portal: '/bench', gate: 'g', memo: new Map() };
    return ctx;
  };
}

/** A peer's key that changes every `every` calls, as {@link callers}. */
function peerKeys(every) {
  let n = 0;
  let key;
  return () => (n++ % every === 0 ? (key = `k${n}-${Math.random()}`) : key);
}

async function loop(c, calls) {
  let refused = 0;
  const cpu = process.cpuUsage();
  const started = performance.now();
  for (let i = 0; i < calls; i++) {
    let answer = c.call();
    if (typeof answer?.then === 'function') answer = await answer.catch((rejected) => rejected);
    if (!c.accept(answer)) refused++;
  }
  const used = process.cpuUsage(cpu);
  if (refused > 0) throw new Error(`bench setup: ${c.name}: ${refused} of ${calls} answers were not the expected one`);
  return { cpuNs: ((used.user + used.system) * 1000) / calls, wallNs: ((performance.now() - started) * 1e6) / calls };
}

const allowed = (verdict) => verdict.ok === true;
const limited = (verdict) => verdict.ok === false && verdict.code === 'rate_limited';
const consumed = (res) => typeof res?.remainingPoints === 'number' && !(res instanceof Error) && res.consumedPoints <= 1_000_000_000;

export async function run({ rounds, durationMs, pin = true, serverCpu = 1 }) {
  const pinning = planPinning({ pin, serverCpu, generatorCpu: serverCpu === 0 ? 1 : 0 });
  pinProcess(pinning.serverCpu);
  const redisBinary = findRedisServer();
  const redis = redisBinary ? await startRedis(redisBinary) : undefined;
  const memory = enforcerOn({});
  const onRedis = redis ? enforcerOn({ SVC__PERSISTENCE__CACHE__PROVIDER: 'redis', SVC__PERSISTENCE__CACHE__URL: redis.url }) : undefined;
  const peerClient = redis ? createClient({ url: redis.url, disableOfflineQueue: true }) : undefined;
  const notes = [];
  try {
    await onRedis?.registration.stores?.ready();
    await peerClient?.connect();
    const plan = (name) => readShieldPlan(BenchPortal, name);
    const decide = (target, name) => {
      const p = plan(name);
      return (ctx) => target.enforcer.decide(p, ctx);
    };
    const memoryPeer = new RateLimiterMemory({ points: 1_000_000_000, duration: 3600 });
    const cases = [
      { key: 'floor', name: 'gate: open, no @RateLimit (floor)', call: ((d, next) => () => d(next()))(decide(memory, 'open'), callers(1e12)), accept: allowed },
      { key: 'memory', name: 'gate: @RateLimit, in memory', call: ((d, next) => () => d(next()))(decide(memory, 'huge'), callers(1e12)), accept: allowed },
      { key: 'peer-memory', name: 'peer: rate-limiter-flexible RateLimiterMemory.consume', call: ((k) => () => memoryPeer.consume(k()))(peerKeys(1e12)), accept: consumed },
    ];
    if (onRedis) {
      const redisPeer = new RateLimiterRedis({ storeClient: peerClient, useRedisPackage: true, points: 20, duration: 3600, keyPrefix: `bench-rlflx-${process.pid}` });
      const spentCtx = callers(1e12);
      const spent = decide(onRedis, 'twenty');
      for (let i = 0; i < 25; i++) await spent(spentCtx());
      cases.push(
        { key: 'redis-20', name: 'gate: @RateLimit limit 20, Redis (a claim of 2 per INCRBY)', call: ((d, next) => () => d(next()))(decide(onRedis, 'twenty'), callers(20)), accept: allowed, redis: true },
        { key: 'redis-1000', name: 'gate: @RateLimit limit 1000, Redis (a claim of 100 per INCRBY)', call: ((d, next) => () => d(next()))(decide(onRedis, 'thousand'), callers(1000)), accept: allowed, redis: true },
        { key: 'redis-spent', name: 'gate: @RateLimit, Redis, over the limit (window known spent)', call: () => spent(spentCtx()), accept: limited },
        { key: 'peer-redis', name: 'peer: rate-limiter-flexible RateLimiterRedis.consume, limit 20 (one EVAL per call)', call: ((k) => () => redisPeer.consume(k()))(peerKeys(20)), accept: consumed, redis: true },
      );
    } else {
      notes.push('redis-server not found: the Redis rows are missing from this run.');
    }
    for (const c of cases) {
      let n = 250;
      let took = 0;
      while (took < 0.05) {
        n *= 2;
        const { wallNs } = await loop(c, n);
        took = (wallNs * n) / 1e9;
      }
      c.calls = Math.max(1000, Math.round((n * durationMs) / 1000 / took));
      c.cpu = [];
      c.wall = [];
    }
    for (let r = 0; r < rounds; r++) {
      for (let k = 0; k < cases.length; k++) {
        const c = cases[(k + r) % cases.length];
        const { cpuNs, wallNs } = await loop(c, c.calls);
        c.cpu.push(cpuNs);
        c.wall.push(wallNs);
      }
    }
    const byKey = Object.fromEntries(cases.map((c) => [c.key, c]));
    const floor = median(byKey.floor.cpu);
    const vsPeer = (c) => {
      const peer = c.key.startsWith('redis-') && c.key !== 'redis-spent' ? byKey['peer-redis'] : c.key === 'memory' ? byKey['peer-memory'] : undefined;
      return peer ? `${ratio(median(peer.cpu), median(c.cpu))}x` : '–';
    };
    const rows = cases.map((c) => ({
      case: c.name,
      'CPU ns/call': withSpread(c.cpu, 0),
      'over floor ns': c.key === 'floor' || c.key.startsWith('peer') ? '–' : Math.round(median(c.cpu) - floor),
      'wall ns/call': Math.round(median(c.wall)),
      'peer CPU ÷ ours': vsPeer(c),
      'calls per round': c.calls,
    }));
    notes.push(
      `${pinning.enabled ? `This process pinned to core ${pinning.serverCpu} (taskset).` : `Not pinned: ${pinning.warning}.`} ${rounds} rounds of about ${durationMs} ms per case, the order rotating by round; "CPU ns/call" is this process's user + system time per call (median, min–max), so the Redis client's encoding and parsing count and redis-server's work does not. "over floor" subtracts the open gate without a limit (the enforcer's own call).`,
      'Calls run one after another: a call that needs Redis waits for its round trip, so "wall ns/call" on Redis is mostly round-trip latency spread over the calls that share a claim. "peer CPU ÷ ours" compares with rate-limiter-flexible doing the same count (in memory; on Redis limit 20, one EVAL per call).',
    );
    return { columns: ['case', 'CPU ns/call', 'over floor ns', 'wall ns/call', 'peer CPU ÷ ours', 'calls per round'], rows, notes };
  } finally {
    await peerClient?.quit().catch(() => undefined);
    await memory.registration.close();
    await onRedis?.registration.close();
    await redis?.stop();
  }
}
