/**
 * The Redis provider (`svc:persistence:cache:provider = redis`), shared by a fleet.
 * keyv with `@keyv/redis` serves plain get/set/delete with a TTL. Operations that need one
 * winner or several keys at once bypass keyv, which has no such primitives, and use the
 * same client directly: `SET NX PX`, `GETDEL`, `MGET`, `MULTI`. Values keep keyv's envelope
 * either way (see cache-entry.ts). Every operation fails fast with `unavailable` while
 * Redis is unreachable and the client reconnects by itself.
 */
import KeyvRedis from '@keyv/redis';
import { Keyv } from 'keyv';
import type { Logger } from '../contracts/logger.js';
import { ConfigError } from '../errors/portcullis-error.js';
import { ThrottledLog } from '../logging/throttled-log.js';
import { decodeEntry, deserializeEntry, encodeEntry, serializeEntry } from './cache-entry.js';
import { storeUnavailable, type CacheNamespace, type CacheRef, type CacheScripts, type CacheStore, type CacheWrite } from './cache-store.js';
import { closeRedisClient, guarded, openRedisClient, topologyOf, waitUntilReady, type RedisClient, type RedisTarget } from './redis-connection.js';
import { RedisRevocationBus } from './redis-revocation-bus.js';
import { RedisScript } from './redis-script.js';
import { establishStoreEpoch } from './store-epoch.js';

/**
 * Options of {@link RedisCacheStore}.
 *
 * @example
 * ```ts
 * const cache = new RedisCacheStore({ url: 'redis://10.0.0.5:6379', keyPrefix: 'game' } satisfies RedisCacheStoreOptions, logger);
 * ```
 */
export interface RedisCacheStoreOptions extends RedisTarget {
  /** Prefix of every key and of the revocation channel; separates apps sharing one Redis. Default `portcullis`. */
  readonly keyPrefix?: string;
  /**
   * An operation Redis sends no reply to within this fails with `unavailable`. The time runs
   * from when its command was sent (at the end of the loop turn that asked for it); time the
   * event loop was stalled is given back; while this process is behind, the time runs from the
   * last reply it read (replies come in order), on a cluster for at most five times this.
   * Default 1000 ms.
   */
  readonly operationTimeoutMs?: number;
  /** Operations waiting for Redis at once; past it an operation fails with `unavailable` before anything is sent. Default 2048. */
  readonly maxPendingOperations?: number;
  /**
   * What {@link RedisCacheStore.ready} does when Redis's `maxmemory-policy` may evict keys:
   * `refuse` (production) rejects with a `ConfigError`, `warn` (default) logs an error.
   */
  readonly onEvictingPolicy?: 'refuse' | 'warn';
}

/**
 * `increment` in one command: `INCRBY` creates a missing counter without a TTL, and
 * `PEXPIRE … NX` gives it the window only then (an existing counter keeps its TTL).
 */
const INCREMENT = new RedisScript(`local n = redis.call('INCRBY', KEYS[1], ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2], 'NX')
return n`);

/** Operations waiting for Redis at once, by default, before more are refused. */
const DEFAULT_MAX_PENDING_OPERATIONS = 2048;

/**
 * Redis {@link CacheStore}. Keys are `<prefix>:<namespace>:<key>`; on a cluster
 * `<prefix>:<namespace>:{<key>}`: the hash tag is the entry's own key (a token digest, a
 * principal, a family, an account digest), so entries spread over the cluster's slots and
 * the entries of one id in different namespaces share a slot. docs/fleet.md tells which operations are atomic on a cluster and why the others
 * stay correct without it.
 *
 * @example
 * ```ts
 * const cache = new RedisCacheStore({ url: config.persistence.cache.url }, logger);
 * await cache.ready();
 * ```
 */
export class RedisCacheStore implements CacheStore {
  readonly provider = 'redis' as const;
  readonly revocations: RedisRevocationBus;
  /** The command connection (also used by keyv). */
  readonly client: RedisClient;
  readonly scripts: CacheScripts | undefined;
  private readonly keyv: Keyv;
  private readonly prefix: string;
  private readonly timeoutMs: number;
  private readonly maxPending: number;
  /** On a cluster, a batch may span slots: no MULTI or MGET across them. */
  private readonly cluster: boolean;
  private readonly onEvictingPolicy: 'refuse' | 'warn';
  private readonly logger: Logger;
  /** Operations refused at the queue bound, and operations failed for want of a reply: a line every 10 s while it lasts. */
  private readonly refusedLine: ThrottledLog;
  private readonly timedOutLine: ThrottledLog;
  private policyChecked = false;
  private pending = 0;
  private closed = false;

  constructor(options: RedisCacheStoreOptions, logger: Logger) {
    this.prefix = options.keyPrefix ?? 'portcullis';
    this.timeoutMs = options.operationTimeoutMs ?? 1000;
    this.maxPending = options.maxPendingOperations ?? DEFAULT_MAX_PENDING_OPERATIONS;
    this.onEvictingPolicy = options.onEvictingPolicy ?? 'warn';
    this.logger = logger;
    this.refusedLine = new ThrottledLog(logger, 'warn', 'redis operations refused with unavailable: maxPendingOperations are waiting for replies');
    this.timedOutLine = new ThrottledLog(logger, 'warn', 'redis operations failed with unavailable: no reply within operationTimeoutMs');
    if (!Number.isSafeInteger(this.maxPending) || this.maxPending <= 0) {
      throw new TypeError(`maxPendingOperations must be a positive integer, got ${this.maxPending}`);
    }
    this.client = openRedisClient(options, logger, 'commands');
    this.cluster = topologyOf(this.client) === 'cluster';
    const adapter = new KeyvRedis<string>(this.client, { throwOnConnectError: true, throwOnErrors: true });
    adapter.on('error', () => {}); // reported once per outage by the connection's own listener
    this.keyv = new Keyv(adapter, { useKeyPrefix: false, serialize: serializeEntry, deserialize: deserializeEntry, throwOnErrors: true });
    this.keyv.namespace = undefined; // keys are namespaced here; see fullKey
    this.keyv.on('error', () => {});
    this.revocations = new RedisRevocationBus(this.client, `${this.prefix}:revocations`, logger, this.timeoutMs);
    this.scripts = this.cluster
      ? undefined
      : { run: (script, args) => this.run(() => new RedisScript(script.source, script.sha).run(this.client, [], [this.prefix, ...args])) };
  }

  get<T>(ns: CacheNamespace, key: string): Promise<T | undefined> {
    return this.run(() => this.keyv.get<T>(this.fullKey(ns, key)));
  }

  getMany(refs: readonly CacheRef[]): Promise<unknown[]> {
    // MGET takes at least one key; nothing to read is no round trip.
    if (refs.length === 0) return Promise.resolve([]);
    return this.run(async () => {
      const keys = refs.map(([ns, key]) => this.fullKey(ns, key));
      // Point reads need no snapshot of each other: on a cluster each goes to its own slot, in parallel.
      const raw = this.cluster ? await Promise.all(keys.map((key) => this.client.get(key))) : await this.client.mGet(keys);
      const now = Date.now();
      return raw.map((text) => decodeEntry(text, now));
    });
  }

  set(ns: CacheNamespace, key: string, value: unknown, ttlMs: number): Promise<void> {
    return this.run(async () => {
      await this.keyv.set(this.fullKey(ns, key), value, ttlMs);
    });
  }

  delete(ns: CacheNamespace, key: string): Promise<boolean> {
    return this.run(() => this.keyv.delete(this.fullKey(ns, key)));
  }

  setIfAbsent(ns: CacheNamespace, key: string, value: unknown, ttlMs: number): Promise<boolean> {
    return this.run(async () => {
      const ms = Math.max(1, Math.ceil(ttlMs));
      const reply = await this.client.set(this.fullKey(ns, key), encodeEntry(value, ms), { expiration: { type: 'PX', value: ms }, condition: 'NX' });
      return reply === 'OK';
    });
  }

  take<T>(ns: CacheNamespace, key: string): Promise<T | undefined> {
    return this.run(async () => decodeEntry<T>(await this.client.getDel(this.fullKey(ns, key))));
  }

  /**
   * One MULTI for the whole batch. On a cluster, one MULTI per run of consecutive writes to
   * the same key (so the same slot), the runs in order: callers order their writes so that
   * every prefix of the batch leaves a correct state (see docs/fleet.md).
   */
  write(writes: readonly CacheWrite[]): Promise<void> {
    return this.run(async () => {
      if (!this.cluster) return this.writeAtomically(writes);
      let start = 0;
      for (let i = 1; i <= writes.length; i++) {
        if (i < writes.length && writes[i]!.key === writes[start]!.key) continue;
        await this.writeAtomically(writes.slice(start, i));
        start = i;
      }
    });
  }

  private async writeAtomically(writes: readonly CacheWrite[]): Promise<void> {
    const multi = this.client.multi();
    for (const w of writes) {
      const key = this.fullKey(w.ns, w.key);
      if (w.kind === 'set') {
        const ms = Math.max(1, Math.ceil(w.ttlMs));
        multi.set(key, encodeEntry(w.value, ms), { expiration: { type: 'PX', value: ms } });
      } else if (w.kind === 'delete') {
        multi.unlink(key);
      } else if (w.kind === 'add-member') {
        const ms = Math.max(1, Math.ceil(w.ttlMs));
        // NX gives a new set its TTL; GT only ever extends an existing one.
        multi.sAdd(key, w.member).pExpire(key, ms, 'NX').pExpire(key, ms, 'GT');
      } else {
        multi.sRem(key, w.member);
      }
    }
    await multi.exec();
  }

  members(ns: CacheNamespace, key: string): Promise<string[]> {
    return this.run(async () => (await this.client.sMembers(this.fullKey(ns, key))).map(String));
  }

  takeMembers(ns: CacheNamespace, key: string): Promise<string[]> {
    return this.run(async () => {
      const full = this.fullKey(ns, key);
      const [members] = await this.client.multi().sMembers(full).unlink(full).exec();
      return Array.isArray(members) ? members.map(String) : [];
    });
  }

  increment(ns: CacheNamespace, key: string, windowMs: number, by = 1): Promise<number> {
    return this.run(async () => {
      const full = this.fullKey(ns, key);
      const ms = Math.max(1, Math.ceil(windowMs));
      // Counters are raw integers (INCRBY needs them) and are never read through keyv.
      return Number(await INCREMENT.run(this.client, [full], [String(by), String(ms)]));
    });
  }

  counter(ns: CacheNamespace, key: string): Promise<{ count: number; remainingMs: number }> {
    return this.run(async () => {
      const full = this.fullKey(ns, key);
      const [count, ttl] = await this.client.multi().get(full).pTTL(full).exec();
      return { count: Number(count ?? 0) || 0, remainingMs: Math.max(0, Number(ttl)) };
    });
  }

  expire(ns: CacheNamespace, key: string, ttlMs: number): Promise<boolean> {
    return this.run(async () => Number(await this.client.pExpire(this.fullKey(ns, key), Math.max(1, Math.ceil(ttlMs)))) === 1);
  }

  remainingMs(ns: CacheNamespace, key: string): Promise<number> {
    return this.run(async () => Math.max(0, Number(await this.client.pTTL(this.fullKey(ns, key)))));
  }

  /**
   * Waits for both connections, checks that Redis never evicts keys (see {@link RedisCacheStoreOptions.onEvictingPolicy})
   * and starts the store epoch if this Redis has none (see store-epoch.ts).
   *
   * @throws ConfigError with `onEvictingPolicy: 'refuse'` when `maxmemory-policy` is not `noeviction`.
   */
  async ready(timeoutMs = 2000): Promise<void> {
    await waitUntilReady(this.client, timeoutMs);
    await this.revocations.whenLive(timeoutMs);
    if (!this.policyChecked) await this.checkEvictionPolicy();
    await establishStoreEpoch(this);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.revocations.close();
    await closeRedisClient(this.client);
  }

  private fullKey(ns: CacheNamespace, key: string): string {
    // The hash tag only on a cluster: single and sentinel keep the names they always had.
    return this.cluster ? `${this.prefix}:${ns}:{${key}}` : `${this.prefix}:${ns}:${key}`;
  }

  /**
   * Every key portcullis writes has a TTL, so any policy but `noeviction` (the `volatile-*` ones
   * too) may drop revocation markers under memory pressure, and a logged-out token works again.
   * Checked whether or not `maxmemory` is set, since it can be set at run time.
   */
  private async checkEvictionPolicy(): Promise<void> {
    let policy: string | undefined;
    try {
      policy = (await this.run(() => this.client.configGet('maxmemory-policy')))['maxmemory-policy'];
    } catch {
      policy = undefined;
    }
    if (policy === undefined) {
      this.logger.warn('could not read the Redis maxmemory-policy (CONFIG GET is refused); it must be noeviction, or revoked tokens can come back');
      this.policyChecked = true;
      return;
    }
    if (policy === 'noeviction') {
      this.policyChecked = true;
      return;
    }
    const problem = `Redis maxmemory-policy is ${policy}: under memory pressure Redis may evict revocation markers, and logged-out tokens work again; set maxmemory-policy noeviction`;
    if (this.onEvictingPolicy === 'refuse') throw new ConfigError('svc:persistence:cache:url', problem);
    this.policyChecked = true;
    this.logger.error(`!!! ${problem} (refused in production) !!!`);
  }

  /**
   * A slow Redis must not gather an unbounded queue in which every request waits out its own
   * timeout: past `maxPendingOperations` an operation is refused before any of its commands is
   * sent, so a transaction is never half queued. An operation counts until Redis answers it,
   * not until its caller stops waiting. Revocation broadcasts do not count against the bound.
   * Refusals at the bound and operations timed out are each counted in a warning written at
   * most every 10 s, so an operator can tell a full queue from a slow Redis.
   */
  private run<T>(operation: () => Promise<T>): Promise<T> {
    if (this.pending >= this.maxPending) {
      this.refusedLine.note({ maxPendingOperations: this.maxPending });
      return Promise.reject(storeUnavailable(new Error(`${this.maxPending} redis operations already waiting`)));
    }
    return guarded(this.client, this.timeoutMs, () => {
      this.pending++;
      const release = () => void this.pending--;
      let answer: Promise<T>;
      try {
        answer = operation();
      } catch (error) {
        release();
        throw error;
      }
      answer.then(release, release);
      return answer;
    }, this.noteTimeout);
  }

  private readonly noteTimeout = (): void => this.timedOutLine.note({ operationTimeoutMs: this.timeoutMs });
}
