import type { CredentialsRevoked, RevocationEvent, RevocationSubscribe } from '../contracts/sessions.js';
import type { Logger } from '../contracts/logger.js';
import { describeError } from '../errors/describe-error.js';
import type { RevocationBus } from '../store/revocation-bus.js';

const GAP: RevocationEvent = Object.freeze({ kind: 'gap' });

/**
 * Where revocations meet: subscribes once to the revocation bus (events made here
 * and, with Redis, on every server; and the gaps when events may have been missed),
 * lets the credential caches drop what an event names first, then tells every
 * listener (the connection registry closes the sockets). Publishing goes through
 * it too, so this process sees its own revocations before the call returns.
 *
 * @example
 * ```ts
 * const hub = new RevocationHub(stores.cache.revocations, (event) => checks.forget(event), logger);
 * const off = hub.onRevocation((event) => { if (event.kind === 'revoked') audit(event.principalId); });
 * await hub.publish({ kind: 'revoked', sessionKeys: [sessionKey(token)], jtis: [] });
 * ```
 */
export class RevocationHub {
  private readonly listeners = new Set<(event: RevocationEvent) => void>();
  private readonly detach: Array<() => void>;

  constructor(
    private readonly bus: RevocationBus,
    private readonly beforeListeners: (event: RevocationEvent) => void,
    private readonly logger: Logger,
  ) {
    this.detach = [this.bus.subscribe((event) => this.deliver(event)), this.bus.onGap(() => this.deliver(GAP))];
  }

  /** True while events from the whole fleet are arriving, so a cached verdict may be trusted. */
  get live(): boolean {
    return this.bus.live;
  }

  /**
   * Subscribes to revocations and gaps; returns the unsubscribe function.
   *
   * @example
   * ```ts
   * const off = hub.onRevocation((event) => event.kind === 'gap' ? resync() : close(event.sessionKeys));
   * ```
   */
  readonly onRevocation: RevocationSubscribe = (listener) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  /** Announces a revocation here (synchronously) and to the fleet. Never rejects. */
  publish(event: Omit<CredentialsRevoked, 'kind'>): Promise<void> {
    return this.bus.publish(Object.freeze({ kind: 'revoked', ...event }));
  }

  /**
   * {@link publish} without waiting for Redis to acknowledge the broadcast: delivered here before
   * it returns, and on its way to the fleet (the message is already queued on the connection, so
   * any later command of this server reaches Redis after it).
   */
  announce(event: Omit<CredentialsRevoked, 'kind'>): void {
    void this.publish(event);
  }

  /** Stops listening to the bus and forgets the listeners. */
  close(): void {
    for (const off of this.detach) off();
    this.listeners.clear();
  }

  private deliver(event: RevocationEvent): void {
    this.beforeListeners(event);
    for (const listener of [...this.listeners]) {
      try {
        listener(event);
      } catch (error) {
        this.logger.error('revocation listener threw', describeError(error));
      }
    }
  }
}
