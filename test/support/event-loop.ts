/**
 * A busy event loop on demand, for tests of what a server does when it falls behind: a long
 * GC pause, a saturated CPU, loop turns that each run long.
 */

/** Blocks this process's event loop for `ms` milliseconds. */
export function stall(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // busy on purpose
  }
}

/**
 * Makes every loop turn of this process run `ms` longer, from the next check phase on, as a
 * saturated server's turns do; answers the function that stops it.
 *
 * @example
 * ```ts
 * const idle = busyTurns(200);
 * await Promise.allSettled(reads);
 * idle();
 * ```
 */
export function busyTurns(ms: number): () => void {
  let busy = true;
  const turn = (): void => {
    if (!busy) return;
    stall(ms);
    setImmediate(turn);
  };
  setImmediate(turn);
  return () => {
    busy = false;
  };
}
