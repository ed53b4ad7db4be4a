/**
 * Collects the frames a test client receives and hands them out: replies by id,
 * everything else in arrival order.
 */
export interface Reply {
  readonly id: number | null;
  readonly ok: boolean;
  readonly data?: unknown;
  readonly error?: { readonly code: string; readonly message: string; readonly retryAfterMs?: number };
}

export class Inbox {
  private readonly frames: unknown[] = [];
  private readonly waiters: Array<{ match: (frame: unknown) => boolean; resolve: (frame: unknown) => void }> = [];
  /** Every frame received, in order. */
  readonly all: unknown[] = [];

  push(frame: unknown): void {
    this.all.push(frame);
    const index = this.waiters.findIndex((w) => w.match(frame));
    if (index >= 0) {
      const [waiter] = this.waiters.splice(index, 1);
      waiter!.resolve(frame);
      return;
    }
    this.frames.push(frame);
  }

  /** The first frame (already received or future) that matches, or a rejection after `timeoutMs`. */
  take(match: (frame: unknown) => boolean = () => true, timeoutMs = 2000): Promise<unknown> {
    const index = this.frames.findIndex(match);
    if (index >= 0) return Promise.resolve(this.frames.splice(index, 1)[0]);
    return new Promise((resolve, reject) => {
      const waiter = { match, resolve: (frame: unknown) => (clearTimeout(timer), resolve(frame)) };
      const timer = setTimeout(() => {
        this.waiters.splice(this.waiters.indexOf(waiter), 1);
        reject(new Error(`no matching frame within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiters.push(waiter);
    });
  }

  /** Resolves true when nothing arrives for `ms`. */
  async quietFor(ms: number): Promise<boolean> {
    const before = this.all.length;
    await new Promise((resolve) => setTimeout(resolve, ms));
    return this.all.length === before;
  }
}

export const byId = (id: number | null) => (frame: unknown) => (frame as Reply | null)?.id === id;
