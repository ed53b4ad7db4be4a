/**
 * Session validation per call (the per-message check of a @SessionShield gate) beside
 * Map.get, keyv's in-memory get and a raw Redis GET, and the upgrade throughput on both
 * providers. Starts its own redis-server on a free port and stops it.
 */
import { performance } from 'node:perf_hooks';
import { createClient } from '@keyv/redis';
import { Keyv } from 'keyv';
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
import { opsPerSecond } from './lib/measure.js';
import { findRedisServer, startRedis } from './lib/redis.js';

export const title = 'Session validation per call and upgrade throughput (one core)';

const KEY = Buffer.alloc(32, 9).toString('base64');

/** Results go here so the JIT cannot drop a call whose value nobody reads. */
let sink;

/** `a / b` to three significant digits (the shared `ratio` rounds small ratios to 0). */
const relative = (a, b) => Number((a / b).toPrecision(3));

async function setup(provider, url, nearCacheSeconds = 5) {
  const config = loadConfig({
    env: {},
    tree: { svc: { security: { mode: 'jwt', key: KEY, session: { 'near-cache-seconds': nearCacheSeconds } }, persistence: { cache: { provider, url } } } },
  });
  const key = resolveSigningKey(config, silentLoggerFactory.create('bench'));
  const issuer = new JwtTokenIssuer(config, key);
  const stores = createSessionStores(config, { keyPrefix: `bench-${process.pid}` });
  await stores.ready();
  const sessions = new TokenSessionSync(config, new JwtTokenValidator(config, key), issuer, stores, silentLoggerFactory, new UdpKeyring(key.keyObject));
  const session = await sessions.upgrade(issuer.issueLoginPair('player-42', { name: 'alice', role: 'player' }).accessToken);
  if (!(await sessions.validate(session.accessToken))) throw new Error(`bench setup: ${provider} refused its own session`);
  return { issuer, stores, sessions, token: session.accessToken, close: async () => (await sessions.close(), await stores.close()) };
}

/** Upgrades `count` fresh JWTs, `inFlight` at a time; answers upgrades per second. */
async function upgradeRate(h, count, inFlight) {
  const jwts = Array.from({ length: count }, (_, i) => h.issuer.issueLoginPair(`player-${i}`, { name: `p${i}` }).accessToken);
  let next = 0;
  const start = performance.now();
  await Promise.all(Array.from({ length: inFlight }, async () => {
    while (next < jwts.length) await h.sessions.upgrade(jwts[next++]);
  }));
  return (count * 1000) / (performance.now() - start);
}

export async function run({ rounds = 5, durationMs = 1000 } = {}) {
  const options = { rounds, durationMs };
  const measured = [];
  const notes = [];
  const measure = async (name, fn) => measured.push([name, await opsPerSecond(fn, options)]);

  const memory = await setup('inmemory', 'redis://127.0.0.1:1');
  const memoryNoNear = await setup('inmemory', 'redis://127.0.0.1:1', 0);
  const map = new Map(Array.from({ length: 10_000 }, (_, i) => [`${i}`.padStart(36, '0') + ';session', { id: String(i) }]));
  map.set(memory.token, { id: 'player-42' });
  const keyv = new Keyv();
  await keyv.set(memory.token, { id: 'player-42', name: 'alice', roles: ['player'] }, 3_600_000);

  await measure('Map.get (floor)', () => (sink = map.get(memory.token)));
  await measure('keyv in-memory get (default serializer)', async () => (sink = await keyv.get(memory.token)));
  await measure('TokenSessionSync.validate, inmemory, near cache on', async () => (sink = await memory.sessions.validate(memory.token)));
  await measure('TokenSessionSync.peek, inmemory (sync near cache)', () => (sink = memory.sessions.peek(memory.token)));
  await measure('TokenSessionSync.validate, inmemory, near cache off (keyv get)', async () => (sink = await memoryNoNear.sessions.validate(memoryNoNear.token)));
  const upgrades = [['upgrade, inmemory, sequential', await upgradeRate(memory, 20_000, 1)]];
  await memory.close();
  await memoryNoNear.close();

  const binary = findRedisServer();
  if (binary) {
    const redis = await startRedis(binary);
    try {
      const remote = await setup('redis', redis.url);
      const remoteNoNear = await setup('redis', redis.url, 0);
      const raw = createClient({ url: redis.url });
      raw.on('error', () => {});
      await raw.connect();
      await raw.set('bench:raw', JSON.stringify({ value: { id: 'player-42' } }));
      await measure('raw Redis GET (sequential round trip)', async () => (sink = await raw.get('bench:raw')));
      await measure('TokenSessionSync.validate, redis, near cache warm', async () => (sink = await remote.sessions.validate(remote.token)));
      await measure('TokenSessionSync.peek, redis (sync near cache)', () => (sink = remote.sessions.peek(remote.token)));
      await measure('TokenSessionSync.validate, redis, near cache off', async () => (sink = await remoteNoNear.sessions.validate(remoteNoNear.token)));
      upgrades.push(['upgrade, redis, sequential', await upgradeRate(remote, 3_000, 1)]);
      upgrades.push(['upgrade, redis, 64 in flight', await upgradeRate(remote, 10_000, 64)]);
      await raw.close();
      await remote.close();
      await remoteNoNear.close();
    } finally {
      await redis.stop();
    }
  } else {
    notes.push('redis-server not found: the Redis rows are missing from this run');
  }

  const peer = (prefix) => measured.find(([name]) => name.startsWith(prefix))?.[1];
  const [mapOps, keyvOps, redisOps] = [peer('Map.get'), peer('keyv'), peer('raw Redis')];
  const columns = ['case', 'ops/s', 'ns/call', 'ratio to Map.get', 'ratio to keyv get', 'ratio to Redis GET'];
  const row = ([name, ops]) => ({
    case: name,
    'ops/s': Math.round(ops),
    'ns/call': Math.round(1e9 / ops),
    'ratio to Map.get': relative(ops, mapOps),
    'ratio to keyv get': relative(ops, keyvOps),
    'ratio to Redis GET': redisOps ? relative(ops, redisOps) : '–',
  });
  const rows = [...measured, ...upgrades].map(row);
  void sink;
  notes.push(
    'validate is async (it may go to the store), so its rows include one await per call; peek is the synchronous near-cache read',
    'the near cache holds a validated session for session:near-cache-seconds (5 here) and drops it on a revocation event from any server',
    'upgrade = verify the JWT, check its family and principal, SET NX its jti, write the pair (one MULTI on Redis); JWTs are issued before timing',
  );
  return { columns, rows, notes };
}
