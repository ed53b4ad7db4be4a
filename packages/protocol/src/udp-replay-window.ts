/**
 * The sliding replay window of authenticated datagrams: the newest sequence number
 * seen and a 64-bit mask of which of the 64 numbers up to it were seen.
 */

/**
 * Sequence numbers the window covers, the newest included (64).
 *
 * @example
 * ```ts
 * const tooOld = newest - seq >= BigInt(UDP_REPLAY_WINDOW);
 * ```
 */
export const UDP_REPLAY_WINDOW = 64;

const MASK = (1n << 64n) - 1n;

/**
 * Accepts each sequence number once: a number above the newest slides the
 * window up; one of the 63 below the newest is accepted if not seen yet; one
 * seen already, or older than the 64 newest, is refused. The first number
 * accepted may be anything.
 *
 * @example
 * ```ts
 * const window = new UdpReplayWindow();
 * window.accept(5n); // true
 * window.accept(5n); // false: a replay
 * window.accept(3n); // true: late, but inside the window
 * ```
 */
export class UdpReplayWindow {
  /** The newest accepted number; -1 before the first. */
  private top = -1n;
  /** Bit i set: `top - i` was accepted. */
  private seen = 0n;

  /** The newest sequence number accepted, or undefined before the first. */
  get newest(): bigint | undefined {
    return this.top < 0n ? undefined : this.top;
  }

  /** True (and remembered) when `seq` is new and not too old; false for a replay or a number older than the window. */
  accept(seq: bigint): boolean {
    if (seq > this.top) {
      const shift = seq - this.top;
      this.seen = shift >= 64n ? 1n : ((this.seen << shift) | 1n) & MASK;
      this.top = seq;
      return true;
    }
    const age = this.top - seq;
    if (age >= 64n) return false;
    const bit = 1n << age;
    if ((this.seen & bit) !== 0n) return false;
    this.seen |= bit;
    return true;
  }
}
