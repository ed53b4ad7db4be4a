/**
 * The session operations on Redis, one at a time: upgrade, refresh and revoke per second,
 * and the `@RateLimit`/lockout counter, each beside a raw node-redis GET on the same
 * redis-server (one network round trip: the floor of anything that asks Redis). One client,
 * sequential awaits, so the rows show what one operation costs end to end. Starts its own
 * redis-server on a free port and stops it.
 *
 * Each round times `count` GETs right beside `count` of each operation (the GETs first in even
 * rounds, last in odd ones: `runPair`), so every ratio is a pair measured within a second of each
 * other, and the table prints the median ratio with the range of the rounds' ratios. This process runs on one core (`--server-cpu`, default 1) and
 * redis-server on another (`--generator-cpu`, default 0) with taskset (`--no-pin` turns it off),
 * so neither takes the other's CPU.
 */
import { performance } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { createClient } from '@keyv/redis';
import {
  createSessionStores,
  JwtTokenIssuer,
  JwtTokenValidator,
  loadConfig,
  resolveSigningKey,
  silentLoggerFactory,
  TokenSessionSync,
  UdpKeyring,
} from '@portcullis/core';
import { pinProcess, planPinning } from './lib/cpu-pinning.js';
import { median, runPair, verdict, withSpread } from './lib/measure.js';
import { findRedisServer, startRedis } from './lib/redis.js';

export const title = 'Session operations on Redis, one at a time, beside a raw GET';
export const defaults = { rounds: 9, count: 2000 };

const KEY = Buffer.alloc(32, 7).toString('base64');

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc');

async function setup(url) {
  const config = loadConfig({ env: {}, tree: { svc: { security: { mode: 'jwt', key: KEY }, persistence: { cache: { provider: 'redis', url } } } } });
  const key = resolveSigningKey(config, silentLoggerFactory.create('bench'));
  const issuer = new JwtTokenIssuer(config, key);
  const stores = createSessionStores(config, { keyPrefix: `bench-ops-${process.pid}` });
  await stores.ready();
  const sessions = new TokenSessionSync(config, new JwtTokenValidator(config, key), issuer, stores, silentLoggerFactory, new UdpKeyring(key.keyObject));
  return { issuer, stores, sessions, close: async () => (await sessions.close(), await stores.close()) };
}

/**
 * Operations per second of `count` sequential calls of `step(inputs, i)`, from a collected
 * heap, so garbage that making the inputs or an earlier run left is not collected on this
 * run's time (what the run itself allocates is).
 */
async function sequentialRate(count, inputs, step) {
  gc();
  const start = performance.now();
  for (let i = 0; i < count; i++) await step(inputs, i);
  return (count * 1000) / (performance.now() - start);
}

/**
 * `rounds` timed rounds after one untimed warm-up round (the first calls of a code path run
 * before the JIT has compiled it). A round makes its inputs untimed with `prepare`, then times
 * `count` calls of `floor` and `count` calls of `step` beside them, in the order `runPair` gives
 * the round. Answers the step's and the floor's rates and the ratio of each round.
 */
async function pairedRounds(rounds, count, floor, prepare, step) {
  const result = { rates: [], floors: [], ratios: [] };
  for (let r = -1; r < rounds; r++) {
    const inputs = await prepare(count, r);
    const { baseline: floorRate, sample: rate } = await runPair(r, () => sequentialRate(count, undefined, floor), () => sequentialRate(count, inputs, step));
    if (r < 0) continue;
    result.rates.push(rate);
    result.floors.push(floorRate);
    result.ratios.push(rate / floorRate);
  }
  return result;
}

export async function run({ rounds = defaults.rounds, count = defaults.count, pin = true, serverCpu = 1, generatorCpu = serverCpu === 0 ? 1 : 0 } = {}) {
  if (!Number.isInteger(count) || count < 1) throw new Error('--count must be a positive integer');
  const binary = findRedisServer();
  if (!binary) return { columns: ['case'], rows: [], notes: ['redis-server not found: nothing measured'] };
  // This process is the "server" of the pair (the one measured), redis-server takes the generator's core.
  const plan = planPinning({ pin, serverCpu, generatorCpu });
  const redis = await startRedis(binary);
  const measured = [];
  try {
    pinProcess(plan.serverCpu);
    pinProcess(plan.generatorCpu, redis.pid);
    const h = await setup(redis.url);
    const raw = createClient({ url: redis.url });
    raw.on('error', () => {});
    await raw.connect();
    await raw.set('bench:raw', JSON.stringify({ value: { id: 'player-42' } }));
    let sink;
    const get = async () => (sink = await raw.get('bench:raw'));
    const paired = (prepare, step) => pairedRounds(rounds, count, get, prepare, step);
    const jwts = (n, r) => Array.from({ length: n }, (_, i) => h.issuer.issueLoginPair(`p-${r}-${i}`, { name: 'alice' }).accessToken);
    measured.push(['upgrade (JWT → session pair)', await paired(jwts, async (list, i) => (sink = await h.sessions.upgrade(list[i])))]);
    measured.push([
      'refresh (session pair rotated)',
      await paired(
        async (_, r) => ({ token: (await h.sessions.upgrade(h.issuer.issueLoginPair(`refresher-${r}`).accessToken)).refreshToken }),
        async (state) => {
          const result = await h.sessions.refresh(state.token);
          state.token = result.session.refreshToken;
        },
      ),
    ]);
    measured.push([
      'revoke (session logout)',
      await paired(
        async (n, r) => {
          const list = [];
          for (const jwt of jwts(n, `revoke-${r}`)) list.push((await h.sessions.upgrade(jwt)).accessToken);
          return list;
        },
        async (list, i) => {
          if (!(await h.sessions.revoke(list[i]))) throw new Error('bench: revoke found no session');
        },
      ),
    ]);
    measured.push([
      'counter increment (@RateLimit claim, lockout count)',
      await paired(
        async () => undefined,
        async (_, i) => (sink = await h.stores.cache.increment('rate-limit', `c-${i & 1023}`, 60_000)),
      ),
    ]);
    void sink;
    await raw.close();
    await h.close();
  } finally {
    await redis.stop();
  }
  const columns = ['case', 'ops/s', 'µs/op', 'GET ops/s, its rounds', 'ratio to raw GET'];
  const perSecond = (rates) => Math.round(median(rates));
  const row = (name, m, ratio) => ({ case: name, 'ops/s': perSecond(m.rates), 'µs/op': Math.round(1e6 / median(m.rates)), 'GET ops/s, its rounds': perSecond(m.floors), 'ratio to raw GET': ratio });
  const floors = measured.flatMap(([, m]) => m.floors);
  const rows = [row('raw node-redis GET (floor)', { rates: floors, floors }, '1'), ...measured.map(([name, m]) => row(name, m, withSpread(m.ratios, 3)))];
  const notes = [
    'one client, one operation at a time (sequential awaits): each row is the latency of one operation, the Redis round trips it takes included',
    `each round times ${count} GETs and ${count} of the operation beside them (the GETs first in even rounds, last in odd ones), each from a collected heap; the ratio is the median of ${rounds} rounds' paired ratios (min–max) after a warm-up round; ops/s are medians too, of the operation's rounds and of the GETs timed in them (the floor row: of every round's GETs); sessions and JWTs are made before timing; target ≥ 0.5× the raw GET`,
    `target ≥ 0.5× the raw GET: ${measured.map(([name, m]) => `${name.split(' ')[0]} ${verdict(m.ratios, { atLeast: 0.5 })}`).join('; ')}`,
    plan.enabled ? `this process on core ${plan.serverCpu}, redis-server on core ${plan.generatorCpu} (taskset)` : `not pinned: ${plan.warning}`,
    'on one Redis server an upgrade and a revoke are one script (EVALSHA) each, a refresh one script plus its event; each includes its revocation event and the session-inventory update, as in a server',
  ];
  return { columns, rows, notes };
}
