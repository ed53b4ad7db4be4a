import { performance } from 'node:perf_hooks';
import { setTimeout as realSetTimeout } from 'node:timers';

/** How often the gauge's own timer runs, in milliseconds. */
const TICK_MS = 25;
/** A tick later than this means the loop was behind, not merely busy for a moment. */
const BEHIND_MS = 20;

/**
 * How far this process's event loop is behind, read in a few nanoseconds: a timer
 * re-armed every 25 ms (unref'd, so it never keeps the process alive) and how late it
 * is. The answer is the larger of how late its last firing was (how long the
 * previous loop turns took: what the messages read now have waited) and how overdue
 * its next firing is (how long the current turn has run). Imported from `node:timers`
 * and `node:perf_hooks`, so fake timers in tests do not stop it.
 *
 * @example
 * ```ts
 * const lag = EventLoopLag.shared();
 * if (lag.behindMs() > 500) return errorReply(id, 'overloaded', undefined, lag.retryAfterMs());
 * if (lag.behindWithin(1000)) keepWaiting(); // the loop was behind within the last second
 * ```
 */
export class EventLoopLag {
  private static instance: EventLoopLag | undefined;
  private due = 0;
  private lastLate = 0;
  private lastBehindAt = Number.NEGATIVE_INFINITY;
  private running = false;

  /** The process's gauge, started on first use. */
  static shared(): EventLoopLag {
    EventLoopLag.instance ??= new EventLoopLag();
    return EventLoopLag.instance;
  }

  /** Milliseconds the event loop is behind now; 0 when it keeps up. */
  behindMs(): number {
    if (!this.running) this.start();
    const overdue = performance.now() - this.due;
    return overdue > this.lastLate ? overdue : this.lastLate;
  }

  /** Whether the loop is behind now, or a tick found it more than 20 ms behind within the last `ms`. */
  behindWithin(ms: number): boolean {
    return this.behindMs() > BEHIND_MS || performance.now() - this.lastBehindAt < ms;
  }

  /** A retry hint for a refused request: the current lag, rounded up to 100 ms, from 100 ms to 5 s. */
  retryAfterMs(): number {
    return Math.min(5000, Math.max(100, Math.ceil(this.behindMs() / 100) * 100));
  }

  private start(): void {
    this.running = true;
    this.due = performance.now() + TICK_MS;
    const tick = () => {
      const now = performance.now();
      this.lastLate = Math.max(0, now - this.due);
      if (this.lastLate > BEHIND_MS) this.lastBehindAt = now;
      this.due = now + TICK_MS;
      realSetTimeout(tick, TICK_MS).unref();
    };
    realSetTimeout(tick, TICK_MS).unref();
  }
}
