import { performance } from 'node:perf_hooks';
import type { Logger } from '../contracts/logger.js';

/**
 * A log line for something that can happen on every request (a shed request, a
 * failed store call): written at most once per `intervalMs`, with how many times it
 * happened since the last line, so an outage costs a line every few seconds instead
 * of one per request.
 *
 * @example
 * ```ts
 * const shedLine = new ThrottledLog(log, 'warn', 'event loop behind: gate calls answered overloaded, unrun');
 * shedLine.note({ behindMs: 730 }); // logs {"behindMs":730,"times":1}; more calls within 10 s only count
 * ```
 */
export class ThrottledLog {
  private times = 0;
  private last = -Infinity;

  constructor(
    private readonly log: Logger,
    private readonly level: 'warn' | 'error',
    private readonly message: string,
    private readonly intervalMs = 10_000,
  ) {}

  /** Counts one occurrence; writes the line (with `fields` and the count) when the interval has passed. */
  note(fields?: Record<string, unknown> | (() => Record<string, unknown>)): void {
    this.times++;
    const now = performance.now();
    if (now - this.last < this.intervalMs) return;
    this.log[this.level](this.message, { ...(typeof fields === 'function' ? fields() : fields), times: this.times });
    this.last = now;
    this.times = 0;
  }
}
