/**
 * The session operations on Redis, one at a time: upgrade, refresh and revoke per second,
 * and the `@RateLimit`/lockout counter, each beside a raw node-redis GET on the same
 * redis-server in the same run (one network round trip: the floor of anything that asks Redis).
 * One client, sequential awaits, so the rows show what one operation costs end to end. Starts
 * its own redis-server on a free port and stops it.
 */
import { performance } from 'node:perf_hooks';
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
import { median, opsPerSecond } from './lib/measure.js';
import { findRedisServer, startRedis } from './lib/redis.js';

export const title = 'Session operations on Redis, one at a time, beside a raw GET';
export const defaults = { rounds: 3, count: 2000 };

const KEY = Buffer.alloc(32, 7).toString('base64');
const relative = (a, b) => Number((a / b).toPrecision(3));

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
 * Runs `prepare` untimed, then times `count` sequential calls of `step(i)`; median over `rounds`
 * after one untimed warm-up round (the first calls of a code path run before the JIT has compiled it), in ops/s.
 */
async function sequentialRate(rounds, count, prepare, step) {
  const rates = [];
  for (let r = -1; r < rounds; r++) {
    const inputs = await prepare(count, r);
    const start = performance.now();
    for (let i = 0; i < count; i++) await step(inputs, i);
    if (r >= 0) rates.push((count * 1000) / (performance.now() - start));
  }
  return median(rates);
}

export async function run({ rounds = 3, count = 2000, durationMs = 1000 } = {}) {
  const binary = findRedisServer();
  if (!binary) return { columns: ['case'], rows: [], notes: ['redis-server not found: nothing measured'] };
  const redis = await startRedis(binary);
  const measured = [];
  try {
    const h = await setup(redis.url);
    const raw = createClient({ url: redis.url });
    raw.on('error', () => {});
    await raw.connect();
    await raw.set('bench:raw', JSON.stringify({ value: { id: 'player-42' } }));
    let sink;
    measured.push(['raw node-redis GET (floor)', await opsPerSecond(async () => (sink = await raw.get('bench:raw')), { rounds, durationMs })]);
    const jwts = (n, r) => Array.from({ length: n }, (_, i) => h.issuer.issueLoginPair(`p-${r}-${i}`, { name: 'alice' }).accessToken);
    measured.push(['upgrade (JWT → session pair)', await sequentialRate(rounds, count, jwts, async (list, i) => (sink = await h.sessions.upgrade(list[i])))]);
    measured.push([
      'refresh (session pair rotated)',
      await sequentialRate(
        rounds,
        count,
        async (_, r) => ({ token: (await h.sessions.upgrade(h.issuer.issueLoginPair(`refresher-${r}`).accessToken)).refreshToken }),
        async (state) => {
          const result = await h.sessions.refresh(state.token);
          state.token = result.session.refreshToken;
        },
      ),
    ]);
    measured.push([
      'revoke (session logout)',
      await sequentialRate(
        rounds,
        count,
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
    let n = 0;
    measured.push(['counter increment (@RateLimit claim, lockout count)', await opsPerSecond(async () => (sink = await h.stores.cache.increment('rate-limit', `c-${n++ & 1023}`, 60_000)), { rounds, durationMs })]);
    void sink;
    await raw.close();
    await h.close();
  } finally {
    await redis.stop();
  }
  const floor = measured[0][1];
  const columns = ['case', 'ops/s', 'µs/op', 'ratio to raw GET'];
  const rows = measured.map(([name, ops]) => ({ case: name, 'ops/s': Math.round(ops), 'µs/op': Math.round(1e6 / ops), 'ratio to raw GET': relative(ops, floor) }));
  const notes = [
    'one client, one operation at a time (sequential awaits): each row is the latency of one operation, the Redis round trips it takes included',
    `upgrade, refresh and revoke: ${count} per round, median of ${rounds} rounds after a warm-up round; sessions and JWTs are made before timing; target ≥ 0.5× the raw GET`,
    'on one Redis server an upgrade and a revoke are one script (EVALSHA) each, a refresh one script plus its event; each includes its revocation event and the session-inventory update, as in a server',
  ];
  return { columns, rows, notes };
}
