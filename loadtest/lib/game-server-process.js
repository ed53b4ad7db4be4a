/**
 * The server side of the load tests: the example game server (HTTP `/auth` and
 * `/api`, `/game` on WebSocket, TCP and UDP) in its own process, so its CPU,
 * memory and event loop are measured without the load generator's. Started by
 * server-handle.js with `fork`; configured by LOADTEST_* variables; answers
 * commands over IPC (accounts, tokens, stats, store entries by namespace, event-loop delay, close).
 * Event-loop responsiveness is measured by loop-monitor.js.
 */
import 'reflect-metadata';
import { writeHeapSnapshot } from 'node:v8';
import {
  ACCOUNT_STORE, ConnectionRegistry, GateDispatcher, JwtTokenIssuer, loadConfig, PasswordHasher, SessionStores, silentLoggerFactory,
} from '@portcullis/core';
import { createGameServer } from '../../examples/game-server/dist/game-server.js';
import { startRealtime } from '../../examples/game-server/dist/realtime.js';
import { serveParent } from '../../bench/lib/child-rpc.js';
import { startLoopMonitor } from './loop-monitor.js';

const env = process.env;
const problems = { warn: 0, error: 0, lastError: undefined, byMessage: {} };
/**
 * Silent, but counts warnings and errors by category and message (our messages are fixed texts),
 * which the reports show: lines in `warn`/`error`, occurrences by message (a throttled line says
 * in `times` how many it stands for).
 */
function count(level, category, message, fields) {
  problems[level]++;
  const key = `${level} [${category}] ${message}`;
  const times = typeof fields?.times === 'number' ? fields.times : 1;
  problems.byMessage[key] = (problems.byMessage[key] ?? 0) + times;
}
const countingLoggers = {
  create: (category) => ({
    debug() {},
    info() {},
    warn(message, fields) {
      count('warn', category, message, fields);
    },
    error(message, fields) {
      count('error', category, message, fields);
      problems.lastError = `[${category}] ${message}`;
    },
  }),
};

const config = loadConfig({
  env: {
    SVC__SECURITY__MODE: 'jwt',
    SVC__SECURITY__KEY: Buffer.alloc(32, 11).toString('base64'),
    SVC__SECURITY__PASSWORD__WORK_FACTOR: env.LOADTEST_WORK_FACTOR ?? '11',
    SVC__SECURITY__ACCESS_TOKEN_MINUTES: env.LOADTEST_ACCESS_TOKEN_MINUTES ?? '15',
    SVC__SECURITY__LOCKOUT__STORE: env.LOADTEST_PROVIDER === 'redis' ? 'backplane' : 'memory',
    // Every load-test player comes from 127.0.0.1: the per-address limit (50 logins in flight or
    // failed) would refuse most of a login storm that real players make from their own addresses.
    SVC__SECURITY__LOCKOUT__IP_MAX_FAILURES: '0',
    SVC__PERSISTENCE__CACHE__PROVIDER: env.LOADTEST_PROVIDER ?? 'inmemory',
    SVC__PERSISTENCE__CACHE__URL: env.LOADTEST_REDIS_URL ?? 'redis://127.0.0.1:6379',
  },
  tree: {},
});
const server = await createGameServer({ config, port: 0, host: '127.0.0.1', loggers: env.LOADTEST_VERBOSE ? undefined : countingLoggers });
const { http } = await server.listen();
const realtime = await startRealtime(server.container, server.httpServer, { host: '127.0.0.1', tcpPort: 0, udpPort: 0 });
// The soak takes heap snapshots under load, each stopping the event loop for seconds: shedding
// would answer those seconds' requests `overloaded`, which says nothing about a leak.
if (env.LOADTEST_SHED === 'off') server.container.resolve(GateDispatcher).shedWhenBehind(false);
const issuer = server.container.resolve(JwtTokenIssuer);
const registry = server.container.resolve(ConnectionRegistry);

const loop = startLoopMonitor();
const cache = server.container.resolve(SessionStores).cache;

/**
 * The session cache's entries by namespace (the key up to its first `:`): how many, how
 * many have no expiry, how many are past it (in memory: not swept yet), the latest expiry
 * from now, and the most members of a set-valued entry; and the configured token
 * lifetimes and clock skew, which bound how long markers are kept. In memory it reads the provider's
 * Map (a private field; only read, and only here); on Redis it scans `portcullis:*` keys
 * and reports counts only.
 */
async function storeEntries() {
  const { accessTokenMinutes, refreshTokenDays, clockSkewSeconds, session } = config.security;
  const lifetimes = {
    accessTokenMs: accessTokenMinutes * 60_000,
    loginTokenMs: Math.max(accessTokenMinutes * 60_000, refreshTokenDays * 86_400_000),
    clockSkewMs: clockSkewSeconds * 1000,
    sessionAccessMs: session.accessMinutes * 60_000,
  };
  const now = Date.now();
  const namespaces = {};
  const at = (ns) => (namespaces[ns] ??= { count: 0, noExpiry: 0, expired: 0, maxRemainingMs: 0, maxMembers: 0 });
  if (cache.provider === 'inmemory') {
    for (const [key, entry] of cache.entries) {
      const ns = at(key.slice(0, key.indexOf(':')));
      ns.count++;
      if (entry.expires === undefined) ns.noExpiry++;
      else if (entry.expires <= now) ns.expired++;
      else ns.maxRemainingMs = Math.max(ns.maxRemainingMs, entry.expires - now);
      if (entry.value instanceof Set) ns.maxMembers = Math.max(ns.maxMembers, entry.value.size);
    }
    return { provider: cache.provider, detail: true, namespaces, lifetimes };
  }
  for await (const batch of cache.client.scanIterator({ MATCH: 'portcullis:*', COUNT: 1000 })) {
    for (const key of [].concat(batch)) at(key.split(':')[1]).count++;
  }
  return { provider: cache.provider, detail: false, namespaces, lifetimes };
}

function stats({ gc = false } = {}) {
  if (gc && globalThis.gc) for (let i = 0; i < 2; i++) globalThis.gc();
  const memory = process.memoryUsage();
  const resources = process.getActiveResourcesInfo();
  return {
    at: Date.now(),
    rss: memory.rss,
    heapUsed: memory.heapUsed,
    external: memory.external,
    handles: process._getActiveHandles().length,
    resources: resources.length,
    cpuMicros: (({ user, system }) => user + system)(process.cpuUsage()),
    connections: { registry: registry.size, ws: realtime.ws.connectionCount, tcp: realtime.tcp.connectionCount },
    udpDropped: { ...realtime.udp.dropped },
    problems: { ...problems, byMessage: { ...problems.byMessage } },
  };
}

const handlers = {
  /** `count` accounts `<prefix><i>` sharing one password, hashed once at the configured cost. */
  async accounts({ prefix, count, password }) {
    const hash = await new PasswordHasher(config).hash(password);
    const store = server.container.resolve(ACCOUNT_STORE);
    for (let i = 0; i < count; i++) await store.create({ username: `${prefix}${i}`, email: `${prefix}${i}@load.test`, passwordHash: hash });
    return count;
  },
  /** JWT access tokens for `count` players (what a login answers), to be upgraded over HTTP. */
  jwts({ prefix, count }) {
    return Array.from({ length: count }, (_, i) => issuer.issueLoginPair(`${prefix}${i}`, { name: `${prefix}${i}`, role: ['player'] }).accessToken);
  },
  stats,
  'store-entries': storeEntries,
  'heap-snapshot': ({ file }) => {
    globalThis.gc?.();
    return writeHeapSnapshot(file);
  },
  'loop-reset': () => loop.reset(),
  'loop-read': () => loop.read(),
  async close() {
    await realtime.close();
    await server.close();
    setImmediate(() => process.exit(0));
    return null;
  },
};

serveParent(handlers, { http, tcpPort: realtime.addresses.tcpPort, udpPort: realtime.addresses.udpPort });
