import type { Logger } from '../contracts/logger.js';
import { ThrottledLog } from '../logging/throttled-log.js';
import { EventLoopLag } from './event-loop-lag.js';

/** By default requests are refused with `overloaded` while the event loop is this far behind. */
export const DEFAULT_SHED_LAG_MS = 500;

/**
 * When a transport refuses requests unrun because the event loop is behind: the one
 * rule the gate dispatcher and the HTTP routes share. While the loop is more than
 * `limitMs` behind (default 500 ms), a request that may have waited that long is
 * answered `overloaded` with a retry hint (the current lag, 100 ms to 5 s), and a
 * warning with the count is logged at most every 10 s.
 *
 * @example
 * ```ts
 * const shedder = new LoadShedder(log, 'guarded HTTP requests');
 * if (shedder.isBehind()) return sendPortcullisError(res, new OverloadedError('requests', shedder.refused() / 1000));
 * ```
 */
export class LoadShedder {
  private readonly lag = EventLoopLag.shared();
  private readonly line: ThrottledLog;
  private lagMs = DEFAULT_SHED_LAG_MS;

  /** @param what what is refused, for the log line (`gate calls`, `HTTP requests`). */
  constructor(log: Logger, what: string) {
    this.line = new ThrottledLog(log, 'warn', `event loop behind: ${what} answered overloaded, unrun`);
  }

  /**
   * The limit a `shedWhenBehind` setting gives: its milliseconds, or Infinity for `false`.
   *
   * @throws TypeError for anything but a positive number of milliseconds or `false`.
   */
  static limitOf(lagMs: number | false): number {
    if (lagMs !== false && !(Number.isFinite(lagMs) && lagMs > 0)) throw new TypeError(`shedWhenBehind takes a positive number of milliseconds or false, got ${lagMs}`);
    return lagMs === false ? Infinity : lagMs;
  }

  /**
   * Sets how far behind the loop may be before requests are refused; `false` never refuses.
   *
   * @throws TypeError for anything but a positive number of milliseconds or `false`.
   */
  setLimit(lagMs: number | false): void {
    this.lagMs = LoadShedder.limitOf(lagMs);
  }

  /** The lag beyond which requests are refused; Infinity when they never are. */
  get limitMs(): number {
    return this.lagMs;
  }

  /** Whether the loop is more than {@link limitMs} behind now (a few nanoseconds). */
  isBehind(): boolean {
    return this.lag.behindMs() > this.lagMs;
  }

  /** Counts a refused request for the log line; answers its retry hint in milliseconds. */
  refused(): number {
    this.line.note(() => ({ behindMs: Math.round(this.lag.behindMs()) }));
    return this.lag.retryAfterMs();
  }
}
