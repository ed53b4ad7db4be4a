/**
 * Runs at most one task per key at a time: callers that arrive while a task is
 * in flight get the same promise. Used so that twenty callers needing a refresh
 * send one `POST /auth/refresh` (a second one would present a used-up token).
 *
 * @example
 * ```ts
 * const flight = new SingleFlight<string>();
 * const [a, b] = await Promise.all([flight.run('k', load), flight.run('k', load)]); // load ran once
 * ```
 */
export class SingleFlight<K> {
  readonly #inFlight = new Map<K, Promise<unknown>>();

  run<T>(key: K, task: () => Promise<T>): Promise<T> {
    const running = this.#inFlight.get(key);
    if (running !== undefined) return running as Promise<T>;
    const started = task().finally(() => this.#inFlight.delete(key));
    this.#inFlight.set(key, started);
    return started;
  }
}
