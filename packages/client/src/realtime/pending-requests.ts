import { isServerErrorCode, PortcullisClientError } from '../errors/portcullis-client-error.js';
import type { InboundFrame, RequestFrame } from './realtime-transport.js';

/** One request waiting for its reply. */
export interface PendingRequest {
  readonly frame: RequestFrame;
  /** Sent on the current link (as opposed to queued until a link is up). */
  sent: boolean;
  /** Already sent again once after an `unauthorized` reply with a renewed credential. */
  retried: boolean;
  /** When the request times out (epoch ms). */
  readonly deadline: number;
  resolve(data: unknown): void;
  reject(error: PortcullisClientError): void;
}

/**
 * Turns an `ok: false` reply into the error a `request` rejects with.
 *
 * @example
 * ```ts
 * errorFromReply({ id: 1, ok: false, error: { code: 'forbidden', message: 'no' } }).code; // 'forbidden'
 * errorFromReply({ id: 2, ok: false, error: { code: 'rate_limited', message: 'slow down', retryAfterMs: 250 } }).retryAfterMs; // 250
 * ```
 */
export function errorFromReply(frame: InboundFrame): PortcullisClientError {
  const error = typeof frame['error'] === 'object' && frame['error'] !== null ? (frame['error'] as Record<string, unknown>) : {};
  const code = isServerErrorCode(error['code']) ? error['code'] : 'unexpected_response';
  const message = typeof error['message'] === 'string' ? error['message'] : 'the request was refused';
  const hint = error['retryAfterMs'];
  return typeof hint === 'number' && Number.isFinite(hint) && hint >= 0
    ? new PortcullisClientError(code, message, { retryAfterMs: hint })
    : new PortcullisClientError(code, message);
}

/**
 * The requests of one connection by id, each with its own timeout. Settling
 * (reply, timeout, abort, close) happens exactly once.
 *
 * @example
 * ```ts
 * const pending = new PendingRequests((id) => link.settle(id));
 * const reply = pending.add(frame, 10_000);
 * pending.resolve(frame.id, { ok: true });
 * ```
 */
export class PendingRequests {
  readonly #byId = new Map<number, PendingRequest>();

  constructor(private readonly onSettled: (id: number) => void) {}

  add(frame: RequestFrame, timeoutMs: number, signal?: AbortSignal): { entry: PendingRequest; reply: Promise<unknown> } {
    let entry!: PendingRequest;
    const reply = new Promise<unknown>((resolve, reject) => {
      const timer = setTimeout(() => this.reject(frame.id, new PortcullisClientError('timeout', `no reply to ${frame.portal}/${frame.gate} within ${timeoutMs} ms`)), timeoutMs);
      const onAbort = (): void => this.reject(frame.id, new PortcullisClientError('connection_closed', 'the request was aborted', { cause: signal?.reason }));
      const done = (): void => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        this.#byId.delete(frame.id);
        this.onSettled(frame.id);
      };
      entry = {
        frame, sent: false, retried: false, deadline: Date.now() + timeoutMs,
        resolve: (data) => { done(); resolve(data); },
        reject: (error) => { done(); reject(error); },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
    });
    this.#byId.set(frame.id, entry);
    if (signal?.aborted === true) this.reject(frame.id, new PortcullisClientError('connection_closed', 'the request was aborted'));
    return { entry, reply };
  }

  get(id: number): PendingRequest | undefined {
    return this.#byId.get(id);
  }

  all(): PendingRequest[] {
    return [...this.#byId.values()];
  }

  reject(id: number, error: PortcullisClientError): void {
    this.#byId.get(id)?.reject(error);
  }

  rejectAll(error: PortcullisClientError, which: (entry: PendingRequest) => boolean = () => true): void {
    for (const entry of this.all()) if (which(entry)) entry.reject(error);
  }
}
