/**
 * The in-memory provider (`svc:persistence:cache:provider = inmemory`): one Map behind one
 * keyv instance. keyv serves plain get/set/delete; the one-winner operations
 * run as a synchronous check-and-set on the same Map, which no other code can interleave
 * with in a single-threaded process. Everything is lost on restart.
 */
import { Keyv } from 'keyv';
import type { Logger } from '../contracts/logger.js';
import type { CacheEntry } from './cache-entry.js';
import type { CacheNamespace, CacheRef, CacheStore, CacheWrite } from './cache-store.js';
import { LocalRevocationBus } from './revocation-bus.js';
import { epochSecondsNow, STORE_EPOCH_REF } from './store-epoch.js';

/**
 * Options of {@link MemoryCacheStore}.
 *
 * @example
 * ```ts
 * const cache = new MemoryCacheStore(logger, { sweepIntervalMs: 10_000 } satisfies MemoryCacheStoreOptions);
 * ```
 */
export interface MemoryCacheStoreOptions {
  /** How often expired entries are swept (keyv itself only drops them when read). Default 60 s. */
  readonly sweepIntervalMs?: number;
}

/**
 * In-memory {@link CacheStore}. Values are stored by reference: callers store frozen
 * objects and never mutate what they read.
 *
 * @example
 * ```ts
 * const cache = new MemoryCacheStore(logger);
 * await cache.set('session', id, record, 60_000);
 * ```
 */
export class MemoryCacheStore implements CacheStore {
  readonly provider = 'inmemory' as const;
  readonly revocations: LocalRevocationBus;
  private readonly entries = new Map<string, CacheEntry>();
  private readonly keyv: Keyv;
  private readonly sweeper: NodeJS.Timeout;

  constructor(logger: Logger, options: MemoryCacheStoreOptions = {}) {
    this.revocations = new LocalRevocationBus(logger);
    // No serializer: values stay objects in the Map, so the synchronous operations below read
    // and write the very same envelopes keyv does. Keys are namespaced here, not by keyv, whose
    // prefixing skips keys that already start with the namespace.
    this.keyv = new Keyv({ store: this.entries, useKeyPrefix: false, serialize: undefined, deserialize: undefined, throwOnErrors: true });
    // This store's data begins now: JWTs issued before (by an earlier process) are refused.
    this.entries.set(this.fullKey(...STORE_EPOCH_REF), { value: epochSecondsNow() });
    this.sweeper = setInterval(() => this.sweep(), options.sweepIntervalMs ?? 60_000);
    this.sweeper.unref();
  }

  get<T>(ns: CacheNamespace, key: string): Promise<T | undefined> {
    return this.keyv.get<T>(this.fullKey(ns, key));
  }

  async getMany(refs: readonly CacheRef[]): Promise<unknown[]> {
    return this.peekMany(refs);
  }

  peekMany(refs: readonly CacheRef[]): unknown[] {
    return refs.map(([ns, key]) => this.entry(ns, key)?.value);
  }

  async set(ns: CacheNamespace, key: string, value: unknown, ttlMs: number): Promise<void> {
    await this.keyv.set(this.fullKey(ns, key), value, ttlMs);
  }

  delete(ns: CacheNamespace, key: string): Promise<boolean> {
    return this.keyv.delete(this.fullKey(ns, key));
  }

  async setIfAbsent(ns: CacheNamespace, key: string, value: unknown, ttlMs: number): Promise<boolean> {
    if (this.entry(ns, key)) return false;
    this.entries.set(this.fullKey(ns, key), { value, expires: Date.now() + ttlMs });
    return true;
  }

  async take<T>(ns: CacheNamespace, key: string): Promise<T | undefined> {
    const entry = this.entry(ns, key);
    if (entry) this.entries.delete(this.fullKey(ns, key));
    return entry?.value as T | undefined;
  }

  async write(writes: readonly CacheWrite[]): Promise<void> {
    const now = Date.now();
    for (const w of writes) {
      const key = this.fullKey(w.ns, w.key);
      if (w.kind === 'set') this.entries.set(key, { value: w.value, expires: now + w.ttlMs });
      else if (w.kind === 'delete') this.entries.delete(key);
      else if (w.kind === 'add-member') this.addMember(key, this.entry(w.ns, w.key), w.member, now + w.ttlMs);
      else this.removeMember(key, this.entry(w.ns, w.key), w.member);
    }
  }

  async members(ns: CacheNamespace, key: string): Promise<string[]> {
    const members = this.entry(ns, key)?.value as Set<string> | undefined;
    return members ? [...members] : [];
  }

  async takeMembers(ns: CacheNamespace, key: string): Promise<string[]> {
    const members = await this.take<Set<string>>(ns, key);
    return members ? [...members] : [];
  }

  async increment(ns: CacheNamespace, key: string, windowMs: number, by = 1): Promise<number> {
    const entry = this.entry(ns, key);
    if (!entry) {
      this.entries.set(this.fullKey(ns, key), { value: by, expires: Date.now() + windowMs });
      return by;
    }
    entry.value = (entry.value as number) + by;
    return entry.value as number;
  }

  async counter(ns: CacheNamespace, key: string): Promise<{ count: number; remainingMs: number }> {
    const entry = this.entry(ns, key);
    if (!entry) return { count: 0, remainingMs: 0 };
    return { count: entry.value as number, remainingMs: entry.expires === undefined ? 0 : Math.max(0, entry.expires - Date.now()) };
  }

  async expire(ns: CacheNamespace, key: string, ttlMs: number): Promise<boolean> {
    const entry = this.entry(ns, key);
    if (entry) entry.expires = Date.now() + ttlMs;
    return entry !== undefined;
  }

  async remainingMs(ns: CacheNamespace, key: string): Promise<number> {
    const entry = this.entry(ns, key);
    return entry?.expires === undefined ? 0 : Math.max(0, entry.expires - Date.now());
  }

  async ready(): Promise<void> {}

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    this.entries.clear();
    await this.revocations.close();
  }

  private fullKey(ns: CacheNamespace, key: string): string {
    return `${ns}:${key}`;
  }

  private entry(ns: CacheNamespace, key: string): CacheEntry | undefined {
    const full = this.fullKey(ns, key);
    const entry = this.entries.get(full);
    if (entry && entry.expires !== undefined && Date.now() > entry.expires) {
      this.entries.delete(full);
      return undefined;
    }
    return entry;
  }

  private addMember(key: string, entry: CacheEntry | undefined, member: string, expires: number): void {
    if (!entry) {
      this.entries.set(key, { value: new Set([member]), expires });
      return;
    }
    (entry.value as Set<string>).add(member);
    entry.expires = Math.max(entry.expires ?? 0, expires);
  }

  private removeMember(key: string, entry: CacheEntry | undefined, member: string): void {
    const members = entry?.value as Set<string> | undefined;
    // An emptied set goes, as in Redis: kept, every logout would leave one behind for refresh-days.
    if (members?.delete(member) && members.size === 0) this.entries.delete(key);
  }

  private sweep(): void {
    const now = Date.now();
    for (const [key, entry] of this.entries) {
      if (entry.expires !== undefined && now > entry.expires) this.entries.delete(key);
    }
  }
}
