import { performance } from 'node:perf_hooks';

/** A loop turn that has read sockets for longer than this reads each of them at most once more. */
export const READ_TURN_BUDGET_MS = 20;

/**
 * Fair reading of many sockets under load: once one event-loop turn has spent
 * {@link READ_TURN_BUDGET_MS} reading, every connection read after that stops reading
 * until the turn ends, and reads again in the next one.
 *
 * Why: libuv's poll phase keeps asking the kernel for ready sockets, without running
 * timers in between, for as long as each answer is a full batch of 1,024. With thousands
 * of busy sockets and a server behind its clients, that holds for up to 48 batches: one
 * turn of two to four seconds in which each socket is read again as soon as it has one
 * new message, so no read carries several (which would let their replies leave in one
 * write), and the event loop looks seconds behind, so every gate call is shed. Reading
 * each socket at most once per long turn bounds a turn by one pass over the sockets,
 * and a server that fell behind then reads several messages a socket and catches up.
 *
 * The turn starts with its first read and ends in the same loop iteration's check phase
 * (`setImmediate`), where the paused connections resume. A turn under the budget
 * pauses nothing, so a server that keeps up never pauses a socket.
 *
 * @example
 * ```ts
 * socket.on('data', (chunk) => {
 *   handle(chunk);
 *   if (!this.yielding && ReadTurns.yieldAfterRead(this.resumeNextTurn)) (this.yielding = true), this.updateReading();
 * });
 * ```
 */
export const ReadTurns = {
  /**
   * Called after a connection's read: true when the current turn has read for longer
   * than the budget, in which case `resume` runs when the turn ends and the caller
   * pauses its reading until then.
   */
  yieldAfterRead(resume: () => void): boolean {
    const now = performance.now();
    if (turn.startedAt < 0) {
      turn.startedAt = now;
      setImmediate(endTurn);
      return false;
    }
    if (now - turn.startedAt <= READ_TURN_BUDGET_MS) return false;
    turn.paused.push(resume);
    return true;
  },
} as const;

const turn = { startedAt: -1, paused: [] as Array<() => void> };

function endTurn(): void {
  const { paused } = turn;
  turn.startedAt = -1;
  turn.paused = [];
  for (const resume of paused) resume();
}
