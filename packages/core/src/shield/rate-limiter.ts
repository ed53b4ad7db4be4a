/**
 * The counters behind `@RateLimit`: fixed windows, each caller's shifted from the
 * clock by an offset derived from its scope and caller key (window n covers
 * [n·w + o, (n+1)·w + o)), so every server of a fleet agrees on them without talking
 * and the callers' windows do not all turn over, and claim again, in the same instant. In memory a window is a Map entry checked synchronously. On Redis a server
 * claims the window's budget in slices (an atomic INCRBY on one key per scope, caller
 * and window) and spends each slice locally; once Redis says the window is used up,
 * the server refuses locally until the window ends, without asking again. A slice is
 * sized by what the caller used on this server in the window before, so a steady
 * caller costs one claim per window. A `connection` counter stays in this process on
 * every provider: a connection lives on one server.
 */
import { createHash } from 'node:crypto';
import type { CacheStore } from '../store/cache-store.js';
import type { PlannedRateLimit } from './shield-plan-reader.js';

/**
 * 0 when the request may pass; otherwise the milliseconds until the caller's
 * window ends (at least 1).
 */
export type RateLimitAnswer = number;

interface LocalWindow {
  readonly offset: number;
  end: number;
  count: number;
}

interface FleetWindow {
  readonly offset: number;
  readonly end: number;
  /** Kept until then (a window past its end), so the next window can size its claims by this one's use. */
  readonly keepUntil: number;
  /** Requests of each claim in this window (see {@link rateLimitClaim}). */
  readonly slice: number;
  /** Requests this server claimed from the fleet-wide counter in this window. */
  granted: number;
  /** Requests this server let through in this window. */
  used: number;
  /** The fleet-wide counter reached the limit: nothing more to claim in this window. */
  spent: boolean;
  claim: Promise<void> | undefined;
}

/** Extra lifetime of a Redis counter past its window, so servers whose clocks differ a little still share it. */
const REDIS_TTL_SLACK_MS = 5_000;
const SWEEP_INTERVAL_MS = 30_000;

/**
 * How many requests a server claims from Redis at a time: a tenth of the limit
 * (at least one), so a caller's requests cost one Redis round trip per slice and a
 * server strands at most a slice minus one of a window's budget.
 */
export function rateLimitSlice(limit: number): number {
  return Math.max(1, Math.floor(limit / 10));
}

/**
 * How many requests a server claims at a time in a window, given what the caller
 * used on this server in the window just before: that use plus a quarter, at least
 * {@link rateLimitSlice} and at most half the limit. A caller sending at a steady
 * rate costs one Redis call per window instead of one per tenth of the limit; a
 * server strands at most half the limit, and only of a caller whose use dropped.
 *
 * @example
 * ```ts
 * rateLimitClaim(20, 0); // 2: nothing known, a tenth
 * rateLimitClaim(20, 4); // 5: 4 a window before, plus a quarter
 * rateLimitClaim(20, 20); // 10: never more than half
 * ```
 */
export function rateLimitClaim(limit: number, usedBefore: number): number {
  return Math.max(rateLimitSlice(limit), Math.min(Math.ceil(usedBefore * 1.25), Math.ceil(limit / 2)));
}

/**
 * Whose counter a request counts against: `p` a principal (by its id), `a` a client
 * address, `c` a connection (by its client id).
 *
 * @example
 * ```ts
 * const kind: CallerKind = rule.by === 'connection' ? 'c' : 'p';
 * ```
 */
export type CallerKind = 'p' | 'a' | 'c';

/**
 * One rule's windows, by kind of caller and then by the caller's id. The ids are the
 * strings the request already holds (a principal id, an address, a client id), so a
 * check builds no key: a string used again keeps its hash, and the look-up is a
 * plain Map hit.
 */
interface RuleWindows<W> {
  readonly p: Map<string, W>;
  readonly a: Map<string, W>;
  readonly c: Map<string, W>;
}

/**
 * Counts requests per `@RateLimit` scope, caller and window. Built by the
 * composition root on the cache provider; with no store (or the in-memory one)
 * it counts in this process.
 *
 * @example
 * ```ts
 * const limiter = new RateLimiter(stores.cache);
 * const wait = limiter.check(plan.rateLimit!, 'p', 'player-1');
 * if (wait !== 0) refuse(wait instanceof Promise ? await wait : wait);
 * ```
 */
export class RateLimiter {
  private readonly local = new Map<string, RuleWindows<LocalWindow>>();
  private readonly fleet = new Map<string, RuleWindows<FleetWindow>>();
  private readonly shared: CacheStore | undefined;
  private readonly sweeper: NodeJS.Timeout;

  constructor(cache: CacheStore | undefined) {
    this.shared = cache?.provider === 'redis' ? cache : undefined;
    this.sweeper = setInterval(() => this.sweep(), SWEEP_INTERVAL_MS);
    this.sweeper.unref();
  }

  /**
   * Counts one request of the caller `id` of kind `kind` against `rule`; answers at
   * once unless this server must claim more of the window from Redis.
   *
   * @throws (rejects with) PortcullisError `unavailable` when Redis cannot be reached for a claim.
   */
  check(rule: PlannedRateLimit, kind: CallerKind, id: string): RateLimitAnswer | Promise<RateLimitAnswer> {
    const now = Date.now();
    const windowMs = rule.windowSeconds * 1000;
    // A connection lives on this server: its counter needs no fleet.
    if (this.shared === undefined || kind === 'c') return this.checkLocal(rule, windowsOf(this.local, rule.scope)[kind], kind, id, windowMs, now);
    const windows = windowsOf(this.fleet, rule.scope)[kind];
    let window = windows.get(id);
    if (window === undefined || now >= window.end) {
      const offset = window?.offset ?? rateLimitWindowOffset(callerKey(rule.scope, kind, id), windowMs);
      const end = windowEnd(now, windowMs, offset);
      const usedBefore = window !== undefined && window.end === end - windowMs ? window.used : 0;
      window = { offset, end, keepUntil: end + windowMs, slice: rateLimitClaim(rule.limit, usedBefore), granted: 0, used: 0, spent: false, claim: undefined };
      windows.set(id, window);
    }
    if (window.used < window.granted) {
      window.used++;
      return 0;
    }
    if (window.spent) return Math.max(1, window.end - now);
    return this.claimAndCheck(rule, kind, id, window, this.shared);
  }

  /** Stops the sweeper; counters already kept stay until the process ends. */
  close(): void {
    clearInterval(this.sweeper);
  }

  private checkLocal(rule: PlannedRateLimit, windows: Map<string, LocalWindow>, kind: CallerKind, id: string, windowMs: number, now: number): RateLimitAnswer {
    const window = windows.get(id);
    if (window === undefined) {
      const offset = rateLimitWindowOffset(callerKey(rule.scope, kind, id), windowMs);
      windows.set(id, { offset, end: windowEnd(now, windowMs, offset), count: 1 });
      return 0;
    }
    if (now >= window.end) {
      window.end = windowEnd(now, windowMs, window.offset);
      window.count = 1;
      return 0;
    }
    if (window.count < rule.limit) {
      window.count++;
      return 0;
    }
    return Math.max(1, window.end - now);
  }

  private async claimAndCheck(rule: PlannedRateLimit, kind: CallerKind, id: string, window: FleetWindow, cache: CacheStore): Promise<RateLimitAnswer> {
    // Requests that arrive while a claim is out wait for it instead of sending their own.
    for (;;) {
      window.claim ??= this.claim(rule, callerKey(rule.scope, kind, id), window, cache).finally(() => {
        window.claim = undefined;
      });
      await window.claim;
      if (Date.now() >= window.end) return this.check(rule, kind, id);
      if (window.used < window.granted) {
        window.used++;
        return 0;
      }
      if (window.spent) return Math.max(1, window.end - Date.now());
    }
  }

  private async claim(rule: PlannedRateLimit, key: string, window: FleetWindow, cache: CacheStore): Promise<void> {
    const slice = window.slice;
    const counter = createHash('sha256').update(`${key}\n${window.end}`).digest('base64url');
    const total = await cache.increment('rate-limit', counter, window.end - Date.now() + REDIS_TTL_SLACK_MS, slice);
    window.granted += Math.max(0, Math.min(slice, rule.limit - (total - slice)));
    if (total >= rule.limit) window.spent = true;
  }

  private sweep(): void {
    const now = Date.now();
    for (const rule of this.local.values()) for (const windows of [rule.p, rule.a, rule.c]) for (const [id, window] of windows) if (now >= window.end) windows.delete(id);
    for (const rule of this.fleet.values()) {
      for (const windows of [rule.p, rule.a, rule.c]) for (const [id, window] of windows) if (now >= window.keepUntil && window.claim === undefined) windows.delete(id);
    }
  }
}

function windowsOf<W>(rules: Map<string, RuleWindows<W>>, scope: string): RuleWindows<W> {
  let windows = rules.get(scope);
  if (windows === undefined) rules.set(scope, (windows = { p: new Map(), a: new Map(), c: new Map() }));
  return windows;
}

/** A caller's name in the fleet and in its window offset: the rule's scope, the kind and the id. */
function callerKey(scope: string, kind: CallerKind, id: string): string {
  return `${scope}\n${kind}:${id}`;
}

function windowEnd(now: number, windowMs: number, offset: number): number {
  return (Math.floor((now - offset) / windowMs) + 1) * windowMs + offset;
}

/**
 * How far a caller's windows are shifted from the clock, in [0, windowMs): a 32-bit
 * FNV-1a hash of the rule's scope and the caller key, the same on every server.
 * Spreading the windows spreads their turnovers: 5,000 players under one rule no
 * longer claim their next window from Redis in the same millisecond.
 *
 * @example
 * ```ts
 * const offset = rateLimitWindowOffset('GamePortal.move\np:player-1', 1000); // e.g. 417
 * ```
 */
export function rateLimitWindowOffset(key: string, windowMs: number): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) hash = Math.imul(hash ^ key.charCodeAt(i), 0x01000193);
  return (hash >>> 0) % windowMs;
}

/**
 * When the window of `caller` under the rule `scope` that holds `now` ends (epoch ms).
 *
 * @example
 * ```ts
 * const end = rateLimitWindowEnd('GamePortal.move', 'p:player-1', 1, Date.now());
 * ```
 */
export function rateLimitWindowEnd(scope: string, caller: string, windowSeconds: number, now: number): number {
  const windowMs = windowSeconds * 1000;
  return windowEnd(now, windowMs, rateLimitWindowOffset(`${scope}\n${caller}`, windowMs));
}
