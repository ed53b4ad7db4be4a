/**
 * How reconnect attempts are spaced.
 *
 * @example
 * ```ts
 * const reconnect: Partial<BackoffOptions> = { initialDelayMs: 500, maxDelayMs: 30_000 };
 * ```
 */
export interface BackoffOptions {
  /** Delay before the first reconnect attempt, in ms (250). */
  readonly initialDelayMs: number;
  /** The cap of any delay, in ms (10,000). */
  readonly maxDelayMs: number;
  /** Growth per attempt (2). */
  readonly factor: number;
  /** Attempts before giving up and closing (Infinity). */
  readonly maxAttempts: number;
  /** Random source in [0, 1), replaceable in tests (Math.random). */
  readonly random: () => number;
}

/**
 * The defaults of {@link BackoffOptions}.
 *
 * @example
 * ```ts
 * const conn = await client.connect({ reconnect: { ...DEFAULT_BACKOFF, maxAttempts: 10 } });
 * ```
 */
export const DEFAULT_BACKOFF: BackoffOptions = Object.freeze({
  initialDelayMs: 250,
  maxDelayMs: 10_000,
  factor: 2,
  maxAttempts: Number.POSITIVE_INFINITY,
  random: Math.random,
});

/**
 * The delay before reconnect attempt `attempt` (0-based): exponential, capped at
 * `maxDelayMs`, with "equal jitter" (between half and all of the step) so that a
 * fleet of clients dropped by one restart does not reconnect in lockstep.
 *
 * @example
 * ```ts
 * backoffDelay(3, DEFAULT_BACKOFF); // between 1000 and 2000 ms
 * ```
 */
export function backoffDelay(attempt: number, options: BackoffOptions): number {
  const step = Math.min(options.maxDelayMs, options.initialDelayMs * options.factor ** attempt);
  return Math.round(step / 2 + (step / 2) * options.random());
}
