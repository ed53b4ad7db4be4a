/**
 * In-order delivery of replies to pipelined requests on one connection. Requests
 * are dispatched as they arrive (a handler that awaits does not hold back the
 * next one), but replies leave in request order, and the number of unanswered
 * requests is bounded so a client cannot queue unbounded work.
 */

/**
 * What a request produced: a reply to send, or nothing (`undefined`).
 *
 * @example
 * ```ts
 * const next: PendingReply<string> = Promise.resolve(dispatcher.dispatchText(text, conn)).then(encodeReply);
 * replies.push(next);
 * ```
 */
export type PendingReply<T> = T | undefined | PromiseLike<T | undefined>;

/**
 * Options of {@link ReplySequencer}.
 *
 * @example
 * ```ts
 * const options: ReplySequencerOptions<string> = { deliver: (text) => ws.send(text), maxPending: 32 };
 * ```
 */
export interface ReplySequencerOptions<T> {
  /** Sends one reply; called in request order. */
  readonly deliver: (reply: T) => void;
  /** Unanswered requests at which `onSaturated` fires (the transport stops reading). Default 64. */
  readonly maxPending?: number;
  /** Called once when the pending count reaches `maxPending`. */
  readonly onSaturated?: () => void;
  /** Called once when the pending count falls back to half of `maxPending`. */
  readonly onRelieved?: () => void;
  /** Called when a pending reply rejects; the slot is then skipped. */
  readonly onError?: (error: unknown) => void;
}

interface Slot<T> {
  done: boolean;
  value: T | undefined;
}

/**
 * Keeps replies in request order.
 *
 * @example
 * ```ts
 * const replies = new ReplySequencer<string>({
 *   deliver: (text) => ws.send(text),
 *   onSaturated: () => ws.pause(),
 *   onRelieved: () => ws.resume(),
 * });
 * ws.on('message', (data) => replies.push(dispatcher.dispatchText(String(data), connection)));
 * ```
 */
export class ReplySequencer<T> {
  readonly maxPending: number;
  private readonly options: ReplySequencerOptions<T>;
  // `deliver` and the count of waiting replies are read for every reply: kept on the instance, so
  // a reply that waits for none reads neither the options nor the slots (see ConnectionProtocol).
  private readonly deliver: (reply: T) => void;
  private readonly slots: Slot<T>[] = [];
  private head = 0;
  private waiting = 0;
  private saturated = false;
  private closed = false;

  constructor(options: ReplySequencerOptions<T>) {
    this.options = options;
    this.deliver = options.deliver;
    this.maxPending = Math.max(1, options.maxPending ?? 64);
  }

  /** Requests whose replies have not been delivered yet. */
  get pending(): number {
    return this.waiting;
  }

  /** True while at least `maxPending` replies are outstanding. */
  get isSaturated(): boolean {
    return this.saturated;
  }

  /** Queues the outcome of the next request in order. */
  push(reply: PendingReply<T>): void {
    if (this.closed) return;
    if (!isThenable(reply)) {
      if (this.waiting === 0) {
        if (reply !== undefined) this.deliver(reply);
        return;
      }
      // Ready but behind a slow reply: it counts toward maxPending like any other.
      this.slots.push({ done: true, value: reply });
      this.waiting++;
      this.checkSaturated();
      return;
    }
    const slot: Slot<T> = { done: false, value: undefined };
    this.slots.push(slot);
    this.waiting++;
    this.checkSaturated();
    reply.then(
      (value) => this.settle(slot, value),
      (error: unknown) => {
        this.options.onError?.(error);
        this.settle(slot, undefined);
      },
    );
  }

  /** Drops everything still pending; later pushes and settlements are ignored. */
  close(): void {
    this.closed = true;
    this.slots.length = 0;
    this.head = 0;
    this.waiting = 0;
  }

  private checkSaturated(): void {
    if (!this.saturated && this.pending >= this.maxPending) {
      this.saturated = true;
      this.options.onSaturated?.();
    }
  }

  private settle(slot: Slot<T>, value: T | undefined): void {
    if (this.closed) return;
    slot.done = true;
    slot.value = value;
    this.flush();
  }

  private flush(): void {
    while (this.head < this.slots.length && this.slots[this.head]!.done) {
      const slot = this.slots[this.head]!;
      this.head += 1;
      this.waiting--;
      if (slot.value !== undefined) this.deliver(slot.value);
      if (this.closed) return;
    }
    if (this.head === this.slots.length) {
      this.slots.length = 0;
      this.head = 0;
    } else if (this.head >= 1024) {
      this.slots.splice(0, this.head);
      this.head = 0;
    }
    if (this.saturated && this.pending <= this.maxPending >> 1) {
      this.saturated = false;
      this.options.onRelieved?.();
    }
  }
}

function isThenable<T>(value: PendingReply<T>): value is PromiseLike<T | undefined> {
  return typeof value === 'object' && value !== null && typeof (value as PromiseLike<unknown>).then === 'function';
}
