/**
 * Single-flight reads: concurrent callers asking for the same key share one store
 * read instead of each issuing their own. Without it, every session whose near-cache
 * entry expires while messages keep arriving sends one store read per message until
 * the first answer is back; under load the answers slow down, more reads pile up, and
 * the server spirals into timeouts (seen in the 5,000-client load test on Redis).
 */

interface Pending<T> {
  readonly generation: number;
  readonly value: Promise<T>;
  /** `Date.now()` when the read was asked for. */
  readonly startedAt: number;
}

/**
 * Shares an in-flight read per key. A read joins only one started in the same
 * `generation`: after a revocation the caller bumps it, so nobody is handed a
 * read that began before the revocation.
 *
 * @example
 * ```ts
 * const lookups = new CoalescedLookups<AccessRecord | undefined>();
 * const record = await lookups.run(token, generation, () => pairs.findAccess(token));
 * ```
 */
export class CoalescedLookups<T> {
  private readonly pending = new Map<string, Pending<T>>();

  /** Reads currently in flight. */
  get size(): number {
    return this.pending.size;
  }

  run(key: string, generation: number, read: () => Promise<T>): Promise<T> {
    const current = this.pending.get(key);
    if (current !== undefined && current.generation === generation) return current.value;
    const entry: Pending<T> = { generation, value: read(), startedAt: Date.now() };
    this.pending.set(key, entry);
    const forget = () => {
      if (this.pending.get(key) === entry) this.pending.delete(key);
    };
    entry.value.then(forget, forget);
    return entry.value;
  }

  /** When the read in flight for `key` was asked for (`Date.now()`); undefined when none is. */
  startedAt(key: string): number | undefined {
    return this.pending.get(key)?.startedAt;
  }
}
