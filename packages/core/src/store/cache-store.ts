/**
 * The cache abstraction sessions and lockout counters sit on. Two providers implement it:
 * in-memory (one process) and Redis (a fleet). Plain reads and writes with a TTL go through
 * keyv; the operations that need one winner are atomic in both providers.
 */
import { PortcullisError } from '../errors/portcullis-error.js';
import type { RevocationBus } from './revocation-bus.js';

/**
 * The namespaces portcullis keeps apart in the cache. Each is a separate keyv namespace
 * (Redis keys `<prefix>:<namespace>:<key>`).
 *
 * @example
 * ```ts
 * const ns: CacheNamespace = 'lockout-failures';
 * await cache.remainingMs(ns, key);
 * ```
 */
export type CacheNamespace =
  /** session access token → session record */
  | 'session'
  /** session refresh token → refresh record */
  | 'session-refresh'
  /** a session's UDP `sid` (hex) → the key of its access record, for as long as the access token lives; deleted with the record */
  | 'udp-session'
  /** jti of an upgraded, rotated or logged-out JWT → marker until the JWT expires */
  | 'used-jwt'
  /** login family id → marker: every JWT of that family is refused */
  | 'revoked-family'
  /** principal id → epoch seconds: JWTs issued at or before it are refused */
  | 'principal-cutoff'
  /** principal id → set of session refresh tokens (the per-principal index) */
  | 'principal-sessions'
  /** login family id → set of session refresh tokens upgraded from that login */
  | 'family-sessions'
  /** session refresh token key → when it was used and its successor's refresh key (reuse detection) */
  | 'used-session-refresh'
  /** used refresh token's digest → its successor, sealed with the used token (only within the reuse grace) */
  | 'refresh-successor'
  /** login family id → login record (the session inventory) */
  | 'login'
  /** principal id → set of login family ids (the session inventory's per-principal index) */
  | 'principal-logins'
  /** account key → login attempts not yet known to have succeeded, in the current window or lock */
  | 'lockout-failures'
  /** client address (IPv6: its /64) → failed logins and refused signups in the current window */
  | 'lockout-address'
  /** digest of a `@RateLimit` scope, caller and window → requests claimed in that window */
  | 'rate-limit'
  /** '' → epoch seconds when the store's data began; JWTs issued before it are refused (see store-epoch.ts) */
  | 'store-epoch';

/**
 * One write of an atomic {@link CacheStore.write} batch.
 *
 * @example
 * ```ts
 * await cache.write([{ kind: 'delete', ns: 'session', key }] satisfies CacheWrite[]);
 * ```
 */
export type CacheWrite =
  | { readonly kind: 'set'; readonly ns: CacheNamespace; readonly key: string; readonly value: unknown; readonly ttlMs: number }
  | { readonly kind: 'delete'; readonly ns: CacheNamespace; readonly key: string }
  /** Adds a member to a set and (re)sets the whole set's TTL to at least `ttlMs`. */
  | { readonly kind: 'add-member'; readonly ns: CacheNamespace; readonly key: string; readonly member: string; readonly ttlMs: number }
  | { readonly kind: 'remove-member'; readonly ns: CacheNamespace; readonly key: string; readonly member: string };

/**
 * A reference to one entry, for {@link CacheStore.getMany}.
 *
 * @example
 * ```ts
 * const [used, family] = await cache.getMany([['used-jwt', jti], ['revoked-family', fam]] satisfies CacheRef[]);
 * ```
 */
export type CacheRef = readonly [ns: CacheNamespace, key: string];

/**
 * Runs a server-side Lua script on the store as one step, in one round trip. The script names
 * its entries itself: `ARGV[1]` is the key prefix, and an entry of namespace `ns` and key `id`
 * is `ARGV[1] .. ':' .. ns .. ':' .. id`; the caller's arguments follow from `ARGV[2]`. Values
 * it writes keep keyv's envelope (`{"value":…,"expires":…}`, see cache-entry.ts).
 *
 * @example
 * ```ts
 * const count = await cache.scripts?.run(countScript, ['player-42']);
 * ```
 */
export interface CacheScripts {
  run(script: { readonly source: string; readonly sha: string }, args: readonly string[]): Promise<unknown>;
}

/**
 * Namespaced key-value store with TTLs, atomic one-winner operations and the revocation
 * bus. Values are JSON-compatible and must be treated as immutable once stored.
 * Every method rejects with `PortcullisError('unavailable')` when the backing store
 * cannot be reached; none waits for a reconnect.
 *
 * @example
 * ```ts
 * const won = await cache.setIfAbsent('used-jwt', claims.jti, true, ttlMs);
 * if (!won) throw new TokenError('revoked');
 * ```
 */
export interface CacheStore {
  readonly provider: 'inmemory' | 'redis';
  /** Fleet-wide (Redis) or in-process (memory) revocation events. */
  readonly revocations: RevocationBus;
  /**
   * Present where one server holds every entry (Redis `single` and `sentinel`): an operation
   * on several entries can then run as one script. Absent in memory, whose operations are
   * synchronous steps already, and on a Redis Cluster, where one operation's entries span slots.
   */
  readonly scripts?: CacheScripts;
  get<T>(ns: CacheNamespace, key: string): Promise<T | undefined>;
  /** Reads several entries of any namespaces in one round trip. */
  getMany(refs: readonly CacheRef[]): Promise<unknown[]>;
  /**
   * {@link getMany} answered at once, without I/O. Only a store that keeps its data in
   * this process has it (memory); callers fall back to `getMany` when it is absent.
   */
  peekMany?(refs: readonly CacheRef[]): unknown[];
  set(ns: CacheNamespace, key: string, value: unknown, ttlMs: number): Promise<void>;
  delete(ns: CacheNamespace, key: string): Promise<boolean>;
  /** Stores the value only if the key is absent; true for the one caller that stored it. */
  setIfAbsent(ns: CacheNamespace, key: string, value: unknown, ttlMs: number): Promise<boolean>;
  /** Reads and deletes in one step; only one concurrent caller gets the value. */
  take<T>(ns: CacheNamespace, key: string): Promise<T | undefined>;
  /** Applies every write or none (a Redis MULTI; one synchronous step in memory). */
  write(writes: readonly CacheWrite[]): Promise<void>;
  /** The members of a set (empty when absent). */
  members(ns: CacheNamespace, key: string): Promise<string[]>;
  /** Reads and deletes a set in one step. */
  takeMembers(ns: CacheNamespace, key: string): Promise<string[]>;
  /**
   * Atomically adds `by` (default 1; may be negative) to a counter that starts a `windowMs`
   * TTL when created; answers the new count. An existing counter keeps its TTL.
   */
  increment(ns: CacheNamespace, key: string, windowMs: number, by?: number): Promise<number>;
  /** A counter's value (0 when absent) and milliseconds until it expires, in one round trip. */
  counter(ns: CacheNamespace, key: string): Promise<{ readonly count: number; readonly remainingMs: number }>;
  /** Gives an existing entry a new TTL of `ttlMs` from now; false when the entry is absent. */
  expire(ns: CacheNamespace, key: string, ttlMs: number): Promise<boolean>;
  /** Milliseconds until the entry expires; 0 when it is absent. */
  remainingMs(ns: CacheNamespace, key: string): Promise<number>;
  /** Resolves once the store can serve requests (at once in memory), or rejects with `unavailable` after `timeoutMs`. */
  ready(timeoutMs?: number): Promise<void>;
  /** Releases connections and timers. Idempotent. */
  close(): Promise<void>;
}

/**
 * The error every store operation fails with when the backing store is unreachable.
 * The cause is kept for logs; the message never names a key. Tests use it to play
 * an outage (`@portcullis/core/testing` exports it).
 *
 * @example
 * ```ts
 * try {
 *   return await redis.get(key);
 * } catch (error) {
 *   throw storeUnavailable(error);
 * }
 * ```
 * @example
 * ```ts
 * vi.spyOn(stack.stores.cache, 'get').mockRejectedValue(storeUnavailable());
 * ```
 */
export function storeUnavailable(cause?: unknown): PortcullisError {
  if (cause instanceof PortcullisError && cause.code === 'unavailable') return cause;
  return new PortcullisError('unavailable', 'session store unavailable', { cause });
}
