/**
 * The sliding replay window of authenticated datagrams: the newest sequence number
 * seen and a 64-bit mask of which of the 64 numbers up to it were seen. Kept as
 * 32-bit halves, so a datagram costs no BigInt arithmetic.
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

const TWO_32 = 0x1_0000_0000;

/**
 * Accepts each sequence number once: a number above the newest slides the
 * window up; one of the 63 below the newest is accepted if not seen yet; one
 * seen already, or older than the 64 newest, is refused. The first number
 * accepted may be anything in 0 … 2⁶⁴−1.
 *
 * @example
 * ```ts
 * const window = new UdpReplayWindow();
 * window.accept(5n); // true
 * window.accept(5n); // false: a replay
 * window.accept(3n); // true: late, but inside the window
 * window.acceptSplit(parts.seqHigh, parts.seqLow); // the same, from a read datagram
 * ```
 */
export class UdpReplayWindow {
  private started = false;
  /** The newest accepted number: its upper and lower 32 bits. */
  private topHigh = 0;
  private topLow = 0;
  /** Bit i (of the 64 made of `seenHigh`:`seenLow`) set: `top - i` was accepted. */
  private seenHigh = 0;
  private seenLow = 0;

  /** The newest sequence number accepted, or undefined before the first. */
  get newest(): bigint | undefined {
    return this.started ? (BigInt(this.topHigh) << 32n) | BigInt(this.topLow) : undefined;
  }

  /**
   * True (and remembered) when `seq` is new and not too old; false for a replay or a number older than the window.
   *
   * @throws RangeError for a number outside 0 … 2⁶⁴−1.
   */
  accept(seq: bigint): boolean {
    if (seq < 0n || seq > 0xffff_ffff_ffff_ffffn) throw new RangeError('a sequence number is an unsigned 64-bit number');
    return this.acceptSplit(Number(seq >> 32n), Number(seq & 0xffff_ffffn));
  }

  /** {@link accept} for the number `high · 2³² + low`, both halves unsigned 32-bit integers (as `readUdpDatagram` gives them). */
  acceptSplit(high: number, low: number): boolean {
    if (!this.started) {
      this.started = true;
      this.slideTo(high, low, UDP_REPLAY_WINDOW);
      return true;
    }
    if (high > this.topHigh || (high === this.topHigh && low > this.topLow)) {
      const ahead = high - this.topHigh > 1 ? UDP_REPLAY_WINDOW : (high - this.topHigh) * TWO_32 + low - this.topLow;
      this.slideTo(high, low, ahead);
      return true;
    }
    const age = this.topHigh - high > 1 ? UDP_REPLAY_WINDOW : (this.topHigh - high) * TWO_32 + this.topLow - low;
    if (age >= UDP_REPLAY_WINDOW) return false;
    if (age < 32) {
      if ((this.seenLow >>> age) & 1) return false;
      this.seenLow = (this.seenLow | (1 << age)) >>> 0;
    } else {
      if ((this.seenHigh >>> (age - 32)) & 1) return false;
      this.seenHigh = (this.seenHigh | (1 << (age - 32))) >>> 0;
    }
    return true;
  }

  /** Makes `high · 2³² + low` the newest, `ahead` (≥ 1) numbers above the previous newest, and marks it seen. */
  private slideTo(high: number, low: number, ahead: number): void {
    if (ahead >= UDP_REPLAY_WINDOW) {
      this.seenHigh = 0;
      this.seenLow = 1;
    } else if (ahead >= 32) {
      this.seenHigh = (this.seenLow << (ahead - 32)) >>> 0;
      this.seenLow = 1;
    } else {
      this.seenHigh = ((this.seenHigh << ahead) | (this.seenLow >>> (32 - ahead))) >>> 0;
      this.seenLow = ((this.seenLow << ahead) | 1) >>> 0;
    }
    this.topHigh = high;
    this.topLow = low;
  }
}
