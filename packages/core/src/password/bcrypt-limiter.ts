/**
 * Caps how many bcrypt computations run at once. bcrypt runs on the libuv thread
 * pool, which fs, DNS and zlib share; a login storm without a cap would occupy
 * every pool thread and stall unrelated I/O for the length of the storm.
 */
import { availableParallelism } from 'node:os';
import { performance } from 'node:perf_hooks';
import bcrypt from 'bcrypt';
import { OverloadedError } from '../errors/portcullis-error.js';

/** libuv's default thread-pool size, used when `UV_THREADPOOL_SIZE` is not set. */
const LIBUV_DEFAULT_POOL_SIZE = 4;

/**
 * The default cap: one bcrypt computation per core but one, so the event loop keeps a
 * core to itself through a login storm (at least one computation, also on one core), and
 * never the whole libuv pool (one thread stays free for fs and DNS).
 *
 * The one read of `process.env` outside `loadConfig`, on purpose: `UV_THREADPOOL_SIZE`
 * is not a portcullis setting but libuv's, which libuv itself reads from the real
 * process environment when the pool starts. The cap must match the pool that exists,
 * and an environment handed to `loadConfig({ env })` (tests, embedding apps) may not
 * be that one. Pass a concurrency to `new BcryptLimiter(n)` to choose it yourself.
 *
 * @example
 * ```ts
 * defaultBcryptConcurrency(); // 1 on 2 cores, 3 on 4 or more with the default pool of 4
 * ```
 *
 * @param cores the usable cores; default `availableParallelism()`.
 * @param env where `UV_THREADPOOL_SIZE` is read; default the process's own environment.
 */
export function defaultBcryptConcurrency(cores: number = availableParallelism(), env: NodeJS.ProcessEnv = process.env): number {
  const configured = Number.parseInt(env.UV_THREADPOOL_SIZE ?? '', 10);
  const poolSize = Number.isInteger(configured) && configured > 0 ? configured : LIBUV_DEFAULT_POOL_SIZE;
  return Math.max(1, Math.min(cores - 1, poolSize - 1));
}

/** How much of the measured mean one finished computation replaces (an exponential moving average). */
const MEAN_WEIGHT = 0.2;

/**
 * Runs bcrypt `hash` and `compare` (the async, thread-pool versions) with at most
 * `concurrency` of them in flight; further calls wait in FIFO order. One process
 * normally shares {@link BcryptLimiter.shared}, because the pool it protects is
 * per process. `inFlight`, `queued`, `admitted` and `maxObserved` are there for metrics and tests.
 *
 * Whole password checks (a login or signup, with the store calls around its bcrypt
 * call) can be admitted with {@link BcryptLimiter.admit}: one that would wait longer
 * than a bound for bcrypt is refused at once, before it counts or changes anything.
 *
 * @example
 * ```ts
 * const limiter = new BcryptLimiter(2);
 * const hash = await limiter.hash('correct horse', 11);
 * await limiter.compare('correct horse', hash); // true
 * limiter.maxObserved; // never above 2
 * await limiter.admit(30_000, 'logins', () => login(body)); // OverloadedError past 30 s of waiting
 * ```
 */
export class BcryptLimiter {
  /** The limiter every {@link PasswordHasher} uses unless given another. */
  static readonly shared = new BcryptLimiter();

  readonly concurrency: number;
  #inFlight = 0;
  #maxObserved = 0;
  #admitted = 0;
  #meanMs: number | undefined;
  readonly #waiting: Array<() => void> = [];

  constructor(concurrency: number = defaultBcryptConcurrency()) {
    if (!Number.isInteger(concurrency) || concurrency < 1) {
      throw new RangeError(`BcryptLimiter concurrency must be a positive integer, got ${String(concurrency)}`);
    }
    this.concurrency = concurrency;
  }

  /** bcrypt computations running now. */
  get inFlight(): number {
    return this.#inFlight;
  }

  /** Calls waiting for a free slot. */
  get queued(): number {
    return this.#waiting.length;
  }

  /** Password checks admitted by {@link admit} and not finished yet. */
  get admitted(): number {
    return this.#admitted;
  }

  /**
   * How long a password check admitted now would wait for bcrypt: the checks already
   * admitted (from their first step, store and captcha calls included), or the
   * computations running and queued if there are more of those, go `concurrency` at a
   * time, each taking the moving mean of the last `hash` and `compare` times. 0 before
   * the first has finished.
   */
  expectedWaitMs(): number {
    if (this.#meanMs === undefined) return 0;
    const ahead = Math.max(this.#admitted, this.#inFlight + this.#waiting.length);
    return Math.floor(ahead / this.concurrency) * this.#meanMs;
  }

  /**
   * Runs `work`, one password check, as admitted for as long as it runs; or refuses it
   * at once, without running it, when {@link expectedWaitMs} is over `maxWaitMs`
   * (0: never refuses). Answers what `work` answers.
   *
   * @param what the kind of work, plural, for the refusal's message (e.g. `'logins'`).
   * @throws OverloadedError (code `overloaded`) with the time until the wait is back within `maxWaitMs`.
   */
  async admit<T>(maxWaitMs: number, what: string, work: () => Promise<T>): Promise<T> {
    const waitMs = this.expectedWaitMs();
    if (maxWaitMs > 0 && waitMs > maxWaitMs) throw new OverloadedError(what, (waitMs - maxWaitMs) / 1000);
    this.#admitted++;
    try {
      return await work();
    } finally {
      this.#admitted--;
    }
  }

  /** The highest `inFlight` seen since construction or the last {@link resetObserved}. */
  get maxObserved(): number {
    return this.#maxObserved;
  }

  /** Restarts `maxObserved` from the current `inFlight`. */
  resetObserved(): void {
    this.#maxObserved = this.#inFlight;
  }

  /** bcrypt hash of `data` with a fresh salt at cost `rounds`. */
  hash(data: string, rounds: number): Promise<string> {
    return this.run(() => this.timed(bcrypt.hash(data, rounds)));
  }

  /** bcrypt comparison of `data` with a stored `hash`. */
  compare(data: string, hash: string): Promise<boolean> {
    return this.run(() => this.timed(bcrypt.compare(data, hash)));
  }

  /** Runs any task under the same cap, e.g. another thread-pool-heavy computation. */
  async run<T>(task: () => Promise<T>): Promise<T> {
    await this.acquire();
    try {
      return await task();
    } finally {
      this.release();
    }
  }

  /** A bcrypt computation, its time counted into the moving mean {@link expectedWaitMs} uses. */
  private async timed<T>(computation: Promise<T>): Promise<T> {
    const started = performance.now();
    try {
      return await computation;
    } finally {
      const tookMs = performance.now() - started;
      this.#meanMs = this.#meanMs === undefined ? tookMs : this.#meanMs + MEAN_WEIGHT * (tookMs - this.#meanMs);
    }
  }

  private acquire(): Promise<void> | void {
    if (this.#inFlight < this.concurrency) {
      this.#inFlight++;
      this.#maxObserved = Math.max(this.#maxObserved, this.#inFlight);
      return;
    }
    return new Promise<void>((resolve) => this.#waiting.push(resolve));
  }

  private release(): void {
    const next = this.#waiting.shift();
    // The slot passes straight to the next caller, so inFlight never dips and a
    // newcomer cannot jump the queue between release and wake-up.
    if (next) next();
    else this.#inFlight--;
  }
}
