/**
 * A per-process near cache: a bounded map of key → value that lives at most a TTL (at
 * least four fifths of it), counted from when its store read began, and never past the
 * value's own expiry. Entries are tagged with
 * a principal and, optionally, a login family, so a revocation event drops all of theirs
 * without a scan. An entry in use may be renewed ahead of its end. The session and JWT
 * near caches are both this.
 */
import { EventLoopLag } from '../runtime/event-loop-lag.js';

/** Share of the TTL by which an entry's lifetime is randomly shortened. */
const JITTER = 0.2;
/**
 * Share of the TTL, before an entry's end, from which a read asks for it to be renewed.
 * A renewal takes up to three event-loop turns (the read that asks, the timer that sends a
 * batch not yet full, the reply), and a server far behind takes a second per turn: half of a 5 s lifetime
 * leaves it time to finish before the entry ends.
 */
const RENEW_WINDOW = 0.5;
/**
 * While the event loop is behind by more than a third of the {@link RENEW_WINDOW} (a
 * renewal's three turns would not fit in it), an entry made or renewed asks for renewal
 * from this share of the TTL into its life: a server whose turns last seconds sends a
 * renewal whose batch is not full only when its turn ends, and on such a server the reads of the last window came
 * too late to keep the sessions in use from running out (each request of theirs would then
 * wait for the store). The cost: entries in use are read again about once per loop turn
 * instead of once per half lifetime, only while the loop is that far behind.
 */
const RENEW_EARLY_AFTER = 0.1;

/**
 * Asked, at most once per entry and while the entry still answers, to renew an entry
 * that is near its end; answers false when it cannot take the job now (the next read
 * asks again).
 *
 * @example
 * ```ts
 * const renew: RenewAhead<Principal> = (token) => refresher.offer(token);
 * ```
 */
export type RenewAhead<V> = (key: string, value: V) => boolean;

/**
 * What a revocation event may name an entry by, besides its key.
 *
 * @example
 * ```ts
 * const tags: NearCacheTags = { principal: claims.sub, family: claims.fam };
 * ```
 */
export interface NearCacheTags {
  readonly principal: string;
  readonly family?: string | undefined;
  /** Another name of this one entry (a session token's store key), for {@link NearCache.dropAlias}. */
  readonly alias?: string | undefined;
}

interface NearEntry<V> {
  readonly value: V;
  until: number;
  /** From then on a read asks `renewAhead` (once) to renew the entry; `until` without it. */
  renewFrom: number;
  readonly tags: NearCacheTags;
}

/**
 * The bounded, tagged TTL map behind the near caches.
 *
 * @example
 * ```ts
 * const near = new NearCache<Principal>(5000, (p) => ({ principal: p.id }));
 * near.put(token, principal, accessExpiresMs);
 * near.dropPrincipal(principal.id);
 * ```
 */
export class NearCache<V> {
  private readonly entries = new Map<string, NearEntry<V>>();
  private readonly byPrincipal = new Map<string, Set<string>>();
  private readonly byFamily = new Map<string, Set<string>>();
  private readonly byAlias = new Map<string, string>();
  private nextSweep = 0;

  constructor(
    private readonly ttlMs: number,
    private readonly tagsOf: (value: V, key: string) => NearCacheTags,
    private readonly maxEntries = 100_000,
    private readonly renewAhead?: RenewAhead<V>,
  ) {}

  /** How many entries are held, expired ones not yet swept included. */
  get size(): number {
    return this.entries.size;
  }

  /**
   * The value while it lives. In the last part of its life the first read also asks
   * `renewAhead` to renew it in the background, so entries in use are read again one
   * at a time instead of all falling out, and back to the store, at once.
   */
  get(key: string): V | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    const now = Date.now();
    if (now < entry.renewFrom) return entry.value;
    if (now >= entry.until) {
      this.delete(key);
      return undefined;
    }
    entry.renewFrom = entry.until;
    if (!this.renewAhead!(key, entry.value)) entry.renewFrom = now;
    return entry.value;
  }

  /**
   * Keeps `value` for at most the TTL from `readAt` (when the store was asked for it:
   * a slow read does not make what is served older than the TTL) and never past
   * `expiresAtMs`; nothing when the TTL is 0 or already over (a read slower than the
   * TTL: the TTL must stay well above the slowest store read).
   */
  put(key: string, value: V, expiresAtMs: number, readAt: number = Date.now()): void {
    if (this.ttlMs <= 0) return;
    const now = Date.now();
    if (now >= this.nextSweep || this.entries.size >= this.maxEntries) this.sweep(now);
    const life = this.lifeOf(expiresAtMs, readAt, now);
    if (life === undefined) return;
    this.delete(key);
    const tags = this.tagsOf(value, key);
    this.entries.set(key, { value, until: life.until, renewFrom: life.renewFrom, tags });
    index(this.byPrincipal, tags.principal, key);
    if (tags.family !== undefined) index(this.byFamily, tags.family, key);
    if (tags.alias !== undefined) this.byAlias.set(tags.alias, key);
  }

  /**
   * A renewal's {@link put} for a value that never changes under its key (a session's
   * record under its token): a live entry keeps its value, tags and indexes and only
   * lives longer, so a renewal allocates nothing that outlives it. Without a live
   * entry it is {@link put}.
   */
  renew(key: string, value: V, expiresAtMs: number, readAt: number = Date.now()): void {
    const entry = this.entries.get(key);
    const now = Date.now();
    if (entry === undefined || now >= entry.until) return this.put(key, value, expiresAtMs, readAt);
    if (now >= this.nextSweep) this.sweep(now);
    const life = this.lifeOf(expiresAtMs, readAt, now);
    if (life === undefined) return;
    entry.until = life.until;
    entry.renewFrom = life.renewFrom;
  }

  /** When an entry read at `readAt` ends and starts asking for renewal; undefined when it would end by `now`. */
  private lifeOf(expiresAtMs: number, readAt: number, now: number): { until: number; renewFrom: number } | undefined {
    // Lifetimes are spread over the last fifth of the TTL so entries made together (a
    // reconnect wave) do not all expire, and go back to the store, in the same instant.
    const start = Math.min(now, readAt);
    const lifetime = start + this.ttlMs * (1 - JITTER * Math.random());
    const until = Math.min(lifetime, expiresAtMs);
    if (until <= now) return undefined;
    // An entry cut short by the value's own expiry is not renewed: a read would not lengthen it.
    if (this.renewAhead === undefined || expiresAtMs <= lifetime) return { until, renewFrom: until };
    const renewFrom = until - this.ttlMs * RENEW_WINDOW;
    if (EventLoopLag.shared().behindMs() <= (this.ttlMs * RENEW_WINDOW) / 3) return { until, renewFrom };
    return { until, renewFrom: Math.min(renewFrom, start + this.ttlMs * RENEW_EARLY_AFTER) };
  }

  drop(key: string): void {
    this.delete(key);
  }

  /** Drops the entry known by this alias. */
  dropAlias(alias: string): void {
    const key = this.byAlias.get(alias);
    if (key !== undefined) this.delete(key);
  }

  dropPrincipal(principalId: string): void {
    for (const key of [...(this.byPrincipal.get(principalId) ?? [])]) this.delete(key);
  }

  dropFamily(familyId: string): void {
    for (const key of [...(this.byFamily.get(familyId) ?? [])]) this.delete(key);
  }

  clear(): void {
    this.entries.clear();
    this.byPrincipal.clear();
    this.byFamily.clear();
    this.byAlias.clear();
  }

  private delete(key: string): void {
    const entry = this.entries.get(key);
    if (entry === undefined) return;
    this.entries.delete(key);
    unindex(this.byPrincipal, entry.tags.principal, key);
    if (entry.tags.family !== undefined) unindex(this.byFamily, entry.tags.family, key);
    if (entry.tags.alias !== undefined) this.byAlias.delete(entry.tags.alias);
  }

  /**
   * Drops expired entries, at most once per TTL (from `put` and `renew`), so entries nobody
   * reads again do not stay until the cap; clears everything if the cap is still reached.
   */
  private sweep(now: number): void {
    this.nextSweep = now + this.ttlMs;
    for (const [key, entry] of this.entries) if (now >= entry.until) this.delete(key);
    if (this.entries.size >= this.maxEntries) this.clear();
  }
}

function index(map: Map<string, Set<string>>, tag: string, key: string): void {
  let set = map.get(tag);
  if (set === undefined) map.set(tag, (set = new Set()));
  set.add(key);
}

function unindex(map: Map<string, Set<string>>, tag: string, key: string): void {
  const set = map.get(tag);
  if (set?.delete(key) && set.size === 0) map.delete(tag);
}
