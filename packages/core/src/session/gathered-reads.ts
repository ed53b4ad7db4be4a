/**
 * Reads asked for in one event-loop turn, sent as one store read. A server that fell
 * behind (it shed load, so nothing renewed its near cache, or it just started) meets
 * thousands of sessions it has not checked lately in a single turn; one store read each
 * filled the store's queue bound and answered the rest `unavailable` while the store was
 * idle. Gathered, 5,000 such checks cost about 80 reads.
 */

/**
 * A batch this old is sent by the next read that joins it (a full batch goes at once). A
 * server that keeps up ends its turns sooner, and its batches go from `setImmediate`.
 */
const GATHER_MS = 10;

interface Batch<K, T> {
  readonly keys: K[];
  /** When its first key was asked for (`performance.now()`). */
  readonly openedAt: number;
  readonly answer: Promise<readonly T[]>;
  send: (answer: Promise<readonly T[]>) => void;
  sent: boolean;
}

/**
 * Gathers keys until the end of the current event-loop turn (`setImmediate`), until
 * `maxBatch` keys are waiting, or until a key joins the batch {@link GATHER_MS} after its
 * first, then reads them with one `readMany`. The batch is one store operation: it counts
 * once against the store's queue bound and fails as a whole (`unavailable`) when the store
 * refuses it or times out.
 *
 * @example
 * ```ts
 * const reads = new GatheredReads((tokens: readonly string[]) => pairs.findAccessMany(tokens), 64);
 * const record = await reads.read(token);
 * ```
 */
export class GatheredReads<K, T> {
  private gathering: Batch<K, T> | undefined;

  constructor(
    private readonly readMany: (keys: readonly K[]) => Promise<readonly T[]>,
    private readonly maxBatch: number,
  ) {}

  /**
   * Reads `key` with the batch it joins. The rule of {@link GATHER_MS} is for a server whose
   * turns last seconds (libuv reads every ready socket before it ends a turn): node-redis
   * writes what a turn asks for from `setImmediate`, so a batch sent from `setImmediate`
   * leaves only when the next turn ends, and on such a server its answers came back older
   * than the near cache keeps one. Sent from the turn that asked, a batch leaves when that
   * turn ends. The last batch of a turn still goes from `setImmediate`.
   */
  read(key: K): Promise<T> {
    const batch = this.gathering ?? this.open();
    const index = batch.keys.push(key) - 1;
    if (batch.keys.length >= this.maxBatch || performance.now() - batch.openedAt >= GATHER_MS) this.flush(batch);
    return batch.answer.then((values) => {
      // A short answer must not read as "nothing there" for the keys it left out.
      if (values.length !== batch.keys.length) throw new TypeError(`a gathered read answered ${values.length} values for ${batch.keys.length} keys`);
      return values[index] as T;
    });
  }

  private open(): Batch<K, T> {
    let send!: (answer: Promise<readonly T[]>) => void;
    const answer = new Promise<readonly T[]>((resolve) => (send = resolve));
    const batch: Batch<K, T> = { keys: [], openedAt: performance.now(), answer, send, sent: false };
    this.gathering = batch;
    setImmediate(() => this.flush(batch));
    return batch;
  }

  private flush(batch: Batch<K, T>): void {
    if (batch.sent) return;
    batch.sent = true;
    if (this.gathering === batch) this.gathering = undefined;
    let answer: Promise<readonly T[]>;
    try {
      answer = this.readMany(batch.keys);
    } catch (error) {
      answer = Promise.reject(error);
    }
    batch.send(answer);
  }
}
