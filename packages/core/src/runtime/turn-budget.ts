import { setImmediate as realSetImmediate } from 'node:timers';
import { EventLoopLag } from './event-loop-lag.js';

/** How far past its timers one turn of the event loop may run before the sockets it reads wait for the next turn. */
export const TURN_BUDGET_MS = 30;

/** A connection that a transport has stopped reading for the rest of a turn. */
export interface HeldReader {
  /** Called once the turn it was held in is over: reads again, unless something else keeps it paused. */
  resumeAfterTurn(): void;
}

/**
 * Keeps one turn of the event loop short when thousands of sockets keep it busy. libuv's poll
 * phase takes ready sockets from `epoll` 1,024 at a time and goes on, without running a timer,
 * for as long as such batches come back full (up to 48 of them). A server at 5,000 sockets that
 * falls more than a message interval behind finds every batch full, reads the same sockets again
 * and again, and runs turns of seconds, each ending as far behind as it began. A transport asks
 * {@link holdsAfterRead} after handling a read; once the turn has run {@link TURN_BUDGET_MS}
 * past its timers it pauses that socket, and the socket reads again right after the poll phase
 * (`setImmediate`). A turn then handles each socket at most once past its budget,
 * and timers, the heartbeat and the store's commands run between turns. What arrives meanwhile
 * waits in the socket's buffers: nothing is dropped or reordered.
 *
 * @example
 * ```ts
 * const budget = TurnBudget.shared();
 * socket.on('data', (chunk) => {
 *   handle(chunk);
 *   if (!connection.held && budget.holdsAfterRead(connection, socket.readableLength)) {
 *     connection.held = true; // its resumeAfterTurn() clears `held` and resumes the socket
 *     socket.pause();
 *   }
 * });
 * ```
 */
export class TurnBudget {
  private static instance: TurnBudget | undefined;
  private readonly held = new Set<HeldReader>();
  private scheduled = false;

  /** The process's budget, on its shared event-loop gauge. */
  static shared(): TurnBudget {
    TurnBudget.instance ??= new TurnBudget(EventLoopLag.shared(), TURN_BUDGET_MS);
    return TurnBudget.instance;
  }

  constructor(
    /** How far the current turn has run past its timers (`EventLoopLag.overdueMs`). */
    private readonly gauge: { overdueMs(): number },
    private readonly budgetMs: number,
  ) {}

  /** Whether the current turn has run past its budget. */
  spent(): boolean {
    return this.gauge.overdueMs() > this.budgetMs;
  }

  /**
   * After a connection's read is handled: when the turn is past its budget and the connection
   * has no more reads buffered (those are all handled first, so no backlog builds up in its
   * buffer), holds it until the poll phase is over. Answers whether it did; the caller then
   * pauses the socket.
   */
  holdsAfterRead(reader: HeldReader, bufferedBytes: number): boolean {
    if (bufferedBytes > 0 || !this.spent()) return false;
    this.hold(reader);
    return true;
  }

  /** Calls `reader.resumeAfterTurn()` once the current poll phase is over. */
  hold(reader: HeldReader): void {
    this.held.add(reader);
    if (this.scheduled) return;
    this.scheduled = true;
    realSetImmediate(this.release);
  }

  private readonly release = (): void => {
    this.scheduled = false;
    const readers = [...this.held];
    this.held.clear();
    for (const reader of readers) reader.resumeAfterTurn();
  };
}
