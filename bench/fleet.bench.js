/**
 * Revocation latency across a fleet: two example game servers (A and B), each in its own
 * process, on one redis-server this bench starts. `count` players each hold a session and
 * a WebSocket on server B; one at a time, each session is logged out on server A
 * (`POST /auth/logout`), and the time runs from that call to the 4401 close the player's
 * socket on B receives. Beside it, in the same run and on the same Redis: the raw
 * PUBLISH → message latency of two node-redis clients (the floor: one pub/sub hop), and the
 * logout call's own HTTP round trip. `rounds` times over, each with new players: the table
 * pools every round's samples and prints the p99 of each round as a range beside it.
 */
import { once } from 'node:events';
import { performance } from 'node:perf_hooks';
import { createClient } from '@keyv/redis';
import { startGameServer } from '../loadtest/lib/server-handle.js';
import { postJson, upgradeAll } from '../loadtest/lib/http-client.js';
import { latencySummary } from '../loadtest/lib/stats.js';
import { closeSockets, openSockets } from '../loadtest/lib/ws-load.js';
import { verdict, withSpread } from './lib/measure.js';
import { findRedisServer, startRedis } from './lib/redis.js';

export const title = 'Revocation latency across two server processes on one Redis';
export const defaults = { rounds: 5, count: 1000 };

const rounded = (ms) => Number(ms.toFixed(3));

/** PUBLISH on one client, time to the message on another: `count` times, one at a time. */
async function publishToMessage(url, count) {
  const publisher = createClient({ url });
  const subscriber = publisher.duplicate();
  for (const client of [publisher, subscriber]) client.on('error', () => {});
  await Promise.all([publisher.connect(), subscriber.connect()]);
  let arrived;
  await subscriber.subscribe('bench:fleet-floor', () => arrived?.(performance.now()));
  const samples = [];
  try {
    for (let i = 0; i < count; i++) {
      const at = new Promise((resolve) => (arrived = resolve));
      const started = performance.now();
      await publisher.publish('bench:fleet-floor', `{"n":${i}}`);
      samples.push((await at) - started);
    }
  } finally {
    await Promise.all([publisher.close(), subscriber.close()]);
  }
  return samples;
}

/** Logs out each session on A, one at a time; answers the call → 4401 latencies and the calls' round trips. */
async function revokeOneByOne(serverA, sessions, sockets) {
  const closes = [];
  const calls = [];
  const afterAnswer = [];
  const wrongCodes = [];
  for (let i = 0; i < sessions.length; i++) {
    const ws = sockets[i];
    const closed = once(ws, 'close').then(([code]) => ({ code, at: performance.now() }));
    const started = performance.now();
    const answer = await postJson(`${serverA.http}/auth/logout`, undefined, sessions[i]);
    if (answer.status !== 204) throw new Error(`logout answered ${answer.status}`);
    const answered = performance.now();
    calls.push(answered - started);
    const { code, at } = await closed;
    if (code !== 4401) wrongCodes.push(code);
    closes.push(at - started);
    afterAnswer.push(Math.max(0, at - answered));
  }
  if (wrongCodes.length > 0) throw new Error(`${wrongCodes.length} sockets closed without 4401, first ${wrongCodes[0]}`);
  return { closes, calls, afterAnswer };
}

/** One round: `count` new players with a session and a socket on B, each logged out on A in turn. */
async function revocationRound(serverA, serverB, redisUrl, count, round) {
  const jwts = await serverA.call('jwts', { prefix: `fleet-player-${round}-`, count });
  const sessions = (await upgradeAll(serverA.http, jwts)).map((s) => s.accessToken);
  const sockets = await openSockets(serverB.wsUrl, sessions);
  try {
    const floor = await publishToMessage(redisUrl, count);
    return { floor, ...(await revokeOneByOne(serverA, sessions, sockets)) };
  } finally {
    await closeSockets(sockets);
  }
}

const CASES = [
  ['floor', 'raw Redis PUBLISH → message, two node-redis clients (floor)'],
  ['calls', 'POST /auth/logout on A, the call answered (204)'],
  ['closes', 'POST /auth/logout on A → 4401 close of the socket on B'],
  ['afterAnswer', 'the logout answered → that 4401 close (0 when the close came first)'],
];

export async function run({ rounds = defaults.rounds, count = defaults.count } = {}) {
  if (!Number.isInteger(count) || count < 1) throw new Error('--count must be a positive integer');
  if (!Number.isInteger(rounds) || rounds < 1) throw new Error('--rounds must be a positive integer');
  const binary = findRedisServer();
  if (!binary) return { columns: ['case'], rows: [], notes: ['redis-server not found: nothing measured'] };
  const redis = await startRedis(binary);
  const servers = [];
  try {
    // Unpinned: two servers, Redis and this client share the machine's cores.
    const serverA = await startGameServer({ provider: 'redis', redisUrl: redis.url, cpu: null });
    servers.push(serverA);
    const serverB = await startGameServer({ provider: 'redis', redisUrl: redis.url, cpu: null });
    servers.push(serverB);
    // An untimed round first: the servers' first logouts and closes run before the JIT has compiled them.
    await revocationRound(serverA, serverB, redis.url, Math.min(count, 200), 'warm-up');
    const measured = [];
    for (let round = 0; round < rounds; round++) measured.push(await revocationRound(serverA, serverB, redis.url, count, round));
    const floor = latencySummary(measured.flatMap((m) => m.floor));
    const row = ([key, name]) => {
      const s = latencySummary(measured.flatMap((m) => m[key]));
      return {
        case: name,
        samples: s.count,
        'p50 ms': rounded(s.p50),
        'p99 ms': rounded(s.p99),
        'p99 ms of each round': withSpread(measured.map((m) => latencySummary(m[key]).p99), 2),
        'max ms': rounded(s.max),
        'p50 / floor p50': Number((s.p50 / floor.p50).toPrecision(3)),
        'p99 / floor p99': Number((s.p99 / floor.p99).toPrecision(3)),
      };
    };
    return {
      columns: ['case', 'samples', 'p50 ms', 'p99 ms', 'p99 ms of each round', 'max ms', 'p50 / floor p50', 'p99 / floor p99'],
      rows: CASES.map(row),
      notes: [
        `${rounds} rounds of ${count} new sessions after an untimed warm-up round, each with one WebSocket on server B; revoked one at a time on server A; the percentiles pool every round's samples, "of each round" is the median p99 of the rounds (min–max); target p99 under 10 ms on loopback`,
        `target: the 4401 close on B, p99 of each round ${verdict(measured.map((m) => latencySummary(m.closes).p99), { atMost: 10 })}`,
        'the revocation path: HTTP to A, A writes the revocation to Redis and publishes it, B receives it, closes the socket, the close frame reaches the client',
        'servers unpinned: A, B, Redis and this client share the machine; the client calls with Node\'s fetch',
      ],
    };
  } finally {
    for (const server of servers.reverse()) await server.close();
    await redis.stop();
  }
}
