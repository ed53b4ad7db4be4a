import { decoratedTarget, defineOwnMetadata, describeTarget, ownMetadata, type ClassOrMethodDecorator } from './decorator-target.js';
import { RATE_LIMIT_METADATA } from './metadata-keys.js';

/**
 * Whose requests one `@RateLimit` counter counts: `principal` (the principal the
 * shield established; the client address for an anonymous caller), `ip` (the
 * client address) or `connection` (the client id: one WebSocket or TCP
 * connection, one HTTP keep-alive connection, one UDP sender address and port).
 * A connection lives on one server, so `connection` counters are kept in that
 * process on every cache provider and never cost a Redis call: the cheapest limit
 * for a gate a player calls many times a second.
 *
 * @example
 * ```ts
 * const by: RateLimitKey = 'ip';
 * ```
 */
export type RateLimitKey = 'principal' | 'ip' | 'connection';

/**
 * What `@RateLimit` accepts.
 *
 * @example
 * ```ts
 * const twentyPerSecond: RateLimitOptions = { limit: 20, windowSeconds: 1 };
 * ```
 */
export interface RateLimitOptions {
  /** Requests a caller may make per window (a whole number from 1). */
  readonly limit: number;
  /** The window's length in seconds (a whole number from 1 to 86,400). */
  readonly windowSeconds: number;
  /** Whose requests are counted together; default `principal`. */
  readonly by?: RateLimitKey;
}

/**
 * One recorded `@RateLimit`, validated and frozen.
 *
 * @example
 * ```ts
 * const rule: RateLimitRule = readShieldPlan(GamePortal, 'move').rateLimit!; // { limit: 20, windowSeconds: 1, by: 'principal' }
 * ```
 */
export interface RateLimitRule {
  readonly limit: number;
  readonly windowSeconds: number;
  readonly by: RateLimitKey;
}

const KEYS: readonly RateLimitKey[] = ['principal', 'ip', 'connection'];

/**
 * Limits how often a caller may pass a gate or route: `limit` requests per fixed
 * window of `windowSeconds`, counted per principal (default), client address or
 * connection. A request over the limit is refused before its handler runs: a gate
 * answers the wire code `rate_limited` with `retryAfterMs`, an HTTP route 429
 * `rate_limited` with `Retry-After`; the connection stays open. Counters live on the
 * cache provider, so a fleet on one Redis shares them. On a class it applies to each
 * gate or route of it separately; a method's `@RateLimit` replaces its class's.
 * Only requests the shield let through are counted.
 *
 * @throws TypeError for a limit or window that is not a positive whole number, an unknown `by`,
 *   or a second `@RateLimit` on the same class or method.
 * @example
 * ```ts
 * @Portal('/game')
 * class GamePortal {
 *   @SessionShield
 *   @RateLimit({ limit: 20, windowSeconds: 1 })
 *   @Gate('move') move(data: MoveData) { ... }
 * }
 * ```
 */
export function RateLimit(options: RateLimitOptions): ClassOrMethodDecorator {
  const rule = ruleOf(options);
  return (target, key, descriptor) => {
    const where = decoratedTarget('@RateLimit', target, key, descriptor);
    if (ownMetadata(RATE_LIMIT_METADATA, where) !== undefined) {
      throw new TypeError(`${describeTarget(target, key)} already has a @RateLimit; put one per class or method`);
    }
    defineOwnMetadata(RATE_LIMIT_METADATA, rule, where);
  };
}

function ruleOf(options: RateLimitOptions): RateLimitRule {
  if (typeof options !== 'object' || options === null) {
    throw new TypeError('@RateLimit(options) expects { limit, windowSeconds, by? }, e.g. @RateLimit({ limit: 20, windowSeconds: 1 })');
  }
  const { limit, windowSeconds, by = 'principal' } = options;
  if (!Number.isSafeInteger(limit) || limit < 1) throw new TypeError(`@RateLimit limit must be a whole number from 1, got ${String(limit)}`);
  if (!Number.isSafeInteger(windowSeconds) || windowSeconds < 1 || windowSeconds > 86_400) {
    throw new TypeError(`@RateLimit windowSeconds must be a whole number from 1 to 86400, got ${String(windowSeconds)}`);
  }
  if (!KEYS.includes(by)) throw new TypeError(`@RateLimit by must be one of ${KEYS.map((k) => `"${k}"`).join(', ')}, got ${String(by)}`);
  return Object.freeze({ limit, windowSeconds, by });
}
