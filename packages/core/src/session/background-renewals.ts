/** A renewal waits at most this long for others to share its store read (a full batch goes at once); far less than the renewal lead (half the near-cache lifetime). */
const RENEWAL_GATHER_MS = 20;
/** Entries renewed by one store read (one MGET on Redis), at most. */
const RENEWAL_BATCH = 256;
/** Entries waiting for a renewal, at most; past that a later read asks again. */
const MAX_QUEUED_RENEWALS = 16_384;
/**
 * Renewal reads in flight at once, at most: as many as it takes to read every entry that
 * may wait. A server far behind fires its timers once per long loop turn and reads each
 * answer a turn later, so whatever waits when the timer fires must go then: at 16 reads
 * (4,096 entries) a server of 5,000 sessions whose turns lasted seconds renewed the rest a
 * turn too late, and their requests fell back on the store.
 */
const MAX_RENEWAL_READS = MAX_QUEUED_RENEWALS / RENEWAL_BATCH;

/**
 * The background half of a near cache's renewal ahead of expiry: entries in use are
 * offered as their end nears, gathered for a few milliseconds (or until a batch is full),
 * and read again {@link RENEWAL_BATCH} at a time, a bounded number of reads in flight (each instance its
 * own bounds), so entries made together do not fall out, and back onto the store,
 * together, unless more than {@link MAX_QUEUED_RENEWALS} wait at once. `readBatch` reads
 * one batch and renews (or drops) its entries; a read that fails leaves them to end on
 * their own.
 *
 * @example
 * ```ts
 * const renewals = new BackgroundRenewals((tokens) => pairs.findAccessMany(tokens).then(renewAll));
 * const near = new SessionNearCache(5000, undefined, (token) => renewals.offer(token));
 * ```
 */
export class BackgroundRenewals {
  private reads = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly queued = new Set<string>();
  /** When the queue, empty, took an entry (`performance.now()`); entries may have gone since. */
  private waitingSince = 0;

  constructor(private readonly readBatch: (keys: string[]) => Promise<void>) {}

  /**
   * Takes an entry to be read again before it ends; false when the queue is full. A full
   * batch goes at once. So does everything waiting when an entry is offered
   * {@link RENEWAL_GATHER_MS} or more after the queue took its first (the entry offered then
   * pays for making the reads); else the timer sends it. On a server whose loop turns last
   * seconds (libuv reads every ready socket before it runs a timer) the timer fires only as
   * the next turn begins, and node-redis writes a read asked for then from `setImmediate`,
   * when that turn ends: a whole turn later than a read sent from the turn that asked.
   */
  offer(key: string): boolean {
    if (this.queued.size >= MAX_QUEUED_RENEWALS) return false;
    const now = performance.now();
    if (this.queued.size === 0) this.waitingSince = now;
    this.queued.add(key);
    if (this.queued.size >= RENEWAL_BATCH && this.reads < MAX_RENEWAL_READS) this.send();
    else if (now - this.waitingSince >= RENEWAL_GATHER_MS) this.sendWaiting();
    else this.schedule();
    return true;
  }

  /** Forgets every entry waiting (a gap: the near cache is emptied). */
  clear(): void {
    this.queued.clear();
  }

  private schedule(): void {
    if (this.timer !== undefined || this.reads >= MAX_RENEWAL_READS || this.queued.size === 0) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.sendWaiting();
    }, RENEWAL_GATHER_MS);
    this.timer.unref();
  }

  /** Every waiting entry goes, as many reads as may be in flight; a timer left has nothing to send. */
  private sendWaiting(): void {
    while (this.reads < MAX_RENEWAL_READS && this.queued.size > 0) this.send();
    if (this.queued.size === 0 && this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
  }

  private send(): void {
    const keys: string[] = [];
    for (const key of this.queued) {
      keys.push(key);
      this.queued.delete(key);
      if (keys.length === RENEWAL_BATCH) break;
    }
    this.reads++;
    let reading: Promise<void>;
    try {
      reading = this.readBatch(keys);
    } catch (error) {
      reading = Promise.reject(error);
    }
    reading
      // The entries end on their own; the first read after that asks the store and fails closed.
      .catch(() => undefined)
      .finally(() => {
        this.reads--;
        // A full batch that waited for this slot goes now, as one offered would.
        if (this.queued.size >= RENEWAL_BATCH) this.send();
        else this.schedule();
      });
  }
}
