/**
 * The account store contract, one suite run against the memory, Redis (single server,
 * cluster and sentinel set) and PostgreSQL stores: look-ups by normalised name and email, one winner of concurrent signups, and
 * (for the durable ones) an account that outlives a restart of the cache. The Redis and
 * PostgreSQL servers are real ones (test/support).
 */
import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from '@keyv/redis';
import { container as rootContainer } from 'tsyringe';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ACCOUNT_STORE, loadConfig, PortcullisError, registerPortcullis, silentLoggerFactory, type AccountStore } from '@portcullis/core';
import { createRedisTestStack } from '@portcullis/core/testing';
import { InMemoryAccountStore } from '../src/account/in-memory-account-store.js';
import { PostgresAccountStore } from '../src/account/postgres-account-store.js';
import { RedisAccountStore } from '../src/account/redis-account-store.js';
import type { RedisTarget } from '../src/store/redis-connection.js';
import { createDatabase } from '../../../test/support/postgres-server.js';
import { hostPorts } from '../../../test/support/redis-topologies.js';
import { startRedisServer, type RedisServer } from '../../../test/support/redis-server.js';

const redisUrl = inject('redisUrl');
const clusterNodes = inject('redisClusterNodes');
const sentinelNodes = inject('redisSentinelNodes');
const postgresUrl = inject('postgresUrl');
const hash = '$2b$04$abcdefghijklmnopqrstuuN6nSqKq6Yp5y1vQY6x8j1wqvJm7x0qa';

/** A store, and how a server would find it again after the cache beside it restarted. */
interface Restartable {
  readonly store: AccountStore;
  restartCache(): Promise<AccountStore>;
}

interface Backend {
  readonly name: string;
  readonly available: boolean;
  /** A fresh, empty store of its own. */
  open(): Promise<AccountStore>;
  /** Undefined for the store that is itself the cache (memory): it is lost with its process. */
  openRestartable?(): Promise<Restartable>;
}

const cleanups: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

async function redisServer(persistent: boolean): Promise<RedisServer> {
  const dir = persistent ? mkdtempSync(join(tmpdir(), 'portcullis-aof-')) : undefined;
  const server = await startRedisServer(undefined, { persistDir: dir });
  cleanups.push(async () => {
    await server.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });
  return server;
}

async function openRedisStore(url: string, keyPrefix: string, target: Omit<RedisTarget, 'url'> = {}): Promise<RedisAccountStore> {
  const store = new RedisAccountStore({ url, keyPrefix, ...target });
  cleanups.push(() => store.close());
  await store.ready();
  return store;
}

/** One server: a Redis test stack on `cacheUrl` keeping its accounts in the PostgreSQL database at `accountsUrl`. */
async function startServer(cacheUrl: string, accountsUrl: string): Promise<{ accounts: AccountStore; close(): Promise<void> }> {
  const stack = await createRedisTestStack(cacheUrl, { env: { SVC__PERSISTENCE__ACCOUNTS__PROVIDER: 'postgres', SVC__PERSISTENCE__ACCOUNTS__URL: accountsUrl } });
  let closed: Promise<void> | undefined;
  const close = () => (closed ??= stack.close());
  cleanups.push(close);
  return { accounts: stack.container.resolve(ACCOUNT_STORE), close };
}

/** Whether a key written to the Redis at `url` before `restart` is still there after it. */
async function survivesRestart(url: string, restart: () => Promise<void>): Promise<boolean> {
  const before = createClient({ url });
  await before.connect();
  await before.set('portcullis-test-marker', 'before the restart');
  await before.close();
  await restart();
  const after = createClient({ url });
  await after.connect();
  const marker = await after.get('portcullis-test-marker');
  await after.close();
  return marker !== null;
}

const backends: Backend[] = [
  { name: 'in-memory', available: true, open: async () => new InMemoryAccountStore() },
  {
    name: 'Redis',
    available: redisUrl !== null,
    open: () => openRedisStore(redisUrl!, `test-${randomUUID()}`),
    async openRestartable() {
      const redis = await redisServer(true);
      const keyPrefix = `test-${randomUUID()}`;
      return {
        store: await openRedisStore(redis.url, keyPrefix),
        async restartCache() {
          expect(await survivesRestart(redis.url, () => redis.restart())).toBe(true);
          return openRedisStore(redis.url, keyPrefix);
        },
      };
    },
  },
  {
    name: 'Redis Cluster',
    available: clusterNodes !== null,
    open: () =>
      openRedisStore('redis://127.0.0.1', `test-${randomUUID()}`, { topology: 'cluster', nodes: hostPorts(clusterNodes!) }),
  },
  {
    name: 'Redis Sentinel',
    available: sentinelNodes !== null,
    open: () => openRedisStore('redis://127.0.0.1', `test-${randomUUID()}`, { topology: 'sentinel', nodes: hostPorts(sentinelNodes!) }),
  },
  {
    name: 'PostgreSQL',
    available: postgresUrl !== null,
    async open() {
      const store = new PostgresAccountStore({ url: postgresUrl!, table: `accounts_${randomUUID().replace(/-/g, '')}` });
      cleanups.push(() => store.close());
      await store.ready();
      return store;
    },
    async openRestartable() {
      const cache = await redisServer(false);
      const accountsUrl = await createDatabase(postgresUrl!);
      const first = await startServer(cache.url, accountsUrl);
      return {
        store: first.accounts,
        async restartCache() {
          await first.close();
          // The cache is a Redis without persistence: its restart loses everything it held.
          expect(await survivesRestart(cache.url, () => cache.restart())).toBe(false);
          return (await startServer(cache.url, accountsUrl)).accounts;
        },
      };
    },
  },
];

describe.each(backends)('$name account store', (backend) => {
  it.runIf(backend.available)('creates an account with a storageId and finds it by id, username and email, ignoring case and spaces', async () => {
    const store = await backend.open();
    const ada = await store.create({ username: 'Ada', email: 'Ada@Example.com', passwordHash: hash });
    expect(ada.storageId).toMatch(/^[0-9a-f-]{36}$/);
    expect(ada).toMatchObject({ username: 'Ada', email: 'Ada@Example.com', passwordHash: hash });
    expect(await store.findById(ada.storageId)).toEqual(ada);
    expect(await store.findByUsername(' ada ')).toEqual(ada);
    expect(await store.findByUsername('ADA')).toEqual(ada);
    expect(await store.findByEmail('ADA@example.COM')).toEqual(ada);
    expect(await store.findByEmail('\tada@example.com ')).toEqual(ada);
    expect(await store.findByUsername('bob')).toBeUndefined();
    expect(await store.findByEmail('bob@example.com')).toBeUndefined();
    expect(await store.findById(randomUUID())).toBeUndefined();
    expect(await store.findById('not-a-uuid')).toBeUndefined();
  });

  it.runIf(backend.available)('keeps a null password hash as null', async () => {
    const store = await backend.open();
    const external = await store.create({ username: 'ext', email: 'ext@example.com', passwordHash: null });
    expect((await store.findByUsername('ext'))?.passwordHash).toBeNull();
    expect(external.passwordHash).toBeNull();
  });

  it.runIf(backend.available)('refuses a taken username or email with conflict, whatever the case, and says which', async () => {
    const store = await backend.open();
    await store.create({ username: 'ada', email: 'ada@example.com', passwordHash: hash });
    await expect(store.create({ username: 'ADA', email: 'other@example.com', passwordHash: hash })).rejects.toMatchObject({ code: 'conflict', message: 'username is taken' });
    await expect(store.create({ username: 'other', email: ' ADA@EXAMPLE.COM', passwordHash: hash })).rejects.toMatchObject({ code: 'conflict', message: 'email is taken' });
    expect(await store.findByUsername('other')).toBeUndefined();
    expect(await store.findByEmail('other@example.com')).toBeUndefined();
  });

  it.runIf(backend.available)('lets exactly one of 20 concurrent creates of one username win', async () => {
    const store = await backend.open();
    const attempts = Array.from({ length: 20 }, (_, i) => store.create({ username: i % 2 ? 'Racer' : 'racer', email: `racer${i}@example.com`, passwordHash: hash }));
    const outcomes = await Promise.allSettled(attempts);
    const won = outcomes.filter((o) => o.status === 'fulfilled');
    expect(won).toHaveLength(1);
    for (const lost of outcomes.filter((o) => o.status === 'rejected')) {
      expect((lost as PromiseRejectedResult).reason).toBeInstanceOf(PortcullisError);
      expect((lost as PromiseRejectedResult).reason.code).toBe('conflict');
    }
    const winner = (won[0] as PromiseFulfilledResult<{ storageId: string; email: string }>).value;
    expect((await store.findByUsername('RACER'))?.storageId).toBe(winner.storageId);
    expect((await store.findByEmail(winner.email))?.storageId).toBe(winner.storageId);
  });

  it.runIf(backend.available)('lets exactly one of 20 concurrent creates of one email win', async () => {
    const store = await backend.open();
    const outcomes = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => store.create({ username: `mailer${i}`, email: 'Shared@Example.com', passwordHash: hash })));
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
    expect(outcomes.filter((o) => o.status === 'rejected' && o.reason.code === 'conflict')).toHaveLength(19);
  });

  if (backend.openRestartable) {
    const openRestartable = backend.openRestartable;
    it.runIf(backend.available)('keeps an account across a restart of the cache', async () => {
      const { store, restartCache } = await openRestartable();
      const ada = await store.create({ username: 'Ada', email: 'ada@example.com', passwordHash: hash });
      const after = await restartCache();
      expect(after).not.toBe(store);
      expect(await after.findByUsername('ADA')).toEqual(ada);
      expect(await after.findByEmail('Ada@Example.com')).toEqual(ada);
      expect(await after.findById(ada.storageId)).toEqual(ada);
      await expect(after.create({ username: 'ada', email: 'new@example.com', passwordHash: hash })).rejects.toMatchObject({ code: 'conflict' });
    });
  }
});

describe.runIf(redisUrl !== null)('the Redis account store at start-up', () => {
  function recordingLogger() {
    const warnings: Array<{ message: string; fields?: Record<string, unknown> }> = [];
    const logger = { debug() {}, info() {}, error() {}, warn: (message: string, fields?: Record<string, unknown>) => void warnings.push({ message, fields }) };
    return { logger, warnings };
  }

  async function readyTwice(url: string) {
    const { logger, warnings } = recordingLogger();
    const store = new RedisAccountStore({ url, keyPrefix: `test-${randomUUID()}` }, logger);
    cleanups.push(() => store.close());
    await store.ready();
    await store.ready();
    return warnings;
  }

  it('warns once that a Redis without persistence loses every account on restart', async () => {
    const warnings = await readyTwice(redisUrl!);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.message).toMatch(/redis has no persistence .*loses every account/);
    expect(warnings[0]!.message).toContain('svc:persistence:accounts:provider = postgres');
  });

  it('does not warn when Redis keeps an append-only file', async () => {
    const persistent = await redisServer(true);
    expect(await readyTwice(persistent.url)).toEqual([]);
  });

  it('says once that it cannot tell when Redis refuses CONFIG GET, and still serves', async () => {
    const user = `accounts-${randomUUID()}`;
    const admin = createClient({ url: redisUrl! });
    await admin.connect();
    await admin.sendCommand(['ACL', 'SETUSER', user, 'on', '>not-a-real-secret', '~*', '&*', '+@all', '-config']);
    cleanups.push(async () => {
      await admin.sendCommand(['ACL', 'DELUSER', user]);
      await admin.close();
    });
    const url = new URL(redisUrl!);
    url.username = user;
    url.password = 'not-a-real-secret';
    const { logger, warnings } = recordingLogger();
    const store = new RedisAccountStore({ url: url.toString(), keyPrefix: `test-${randomUUID()}` }, logger);
    cleanups.push(() => store.close());
    await store.ready();
    await store.ready();
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.message).toMatch(/cannot tell whether redis persists accounts: CONFIG GET was refused/);
    expect(JSON.stringify(warnings)).not.toContain('not-a-real-secret');
    expect(await store.create({ username: 'ada', email: 'ada@example.com', passwordHash: hash })).toMatchObject({ username: 'ada' });
  });

  it('is warned about by registerPortcullis(...).ready() when accounts stay in a Redis cache', async () => {
    const { logger, warnings } = recordingLogger();
    const config = loadConfig({ env: {}, tree: { svc: { security: { mode: 'jwt', key: Buffer.alloc(32, 3).toString('base64') }, persistence: { cache: { provider: 'redis', url: redisUrl } } } } });
    const registration = registerPortcullis(rootContainer.createChildContainer(), { config, loggers: { create: () => logger }, stores: { keyPrefix: `test-${randomUUID()}` } });
    cleanups.push(() => registration.close());
    await registration.ready();
    expect(warnings.map((w) => w.message)).toContainEqual(expect.stringMatching(/redis has no persistence/));
  });
});
