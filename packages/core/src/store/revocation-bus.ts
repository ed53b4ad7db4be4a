/**
 * How revocations travel: in-process for the memory provider, over Redis pub/sub for a
 * fleet. Near caches listen here to drop revoked sessions.
 */
import type { Logger } from '../contracts/logger.js';
import type { CredentialsRevoked, PushListener } from '../contracts/sessions.js';
import { describeError } from '../errors/describe-error.js';

/**
 * Carries {@link CredentialsRevoked} events to every listener in this process and, with Redis, to
 * every server sharing the cache.
 *
 * @example
 * ```ts
 * const off = cache.revocations.subscribe((e) => e.sessionKeys.forEach(closeSocketsWithKey));
 * cache.revocations.onGap(() => nearCache.clear());
 * ```
 */
export interface RevocationBus {
  /** Delivers to local listeners synchronously, then to the fleet. Never rejects. */
  publish(event: CredentialsRevoked): Promise<void>;
  subscribe(listener: (event: CredentialsRevoked) => void): () => void;
  /** Called when events may have been missed (the fleet channel dropped or came back). */
  onGap(listener: () => void): () => void;
  /** True while events from the whole fleet are arriving, so a local cache may be trusted. */
  readonly live: boolean;
  /**
   * Sends a push for a principal's connections to the other servers of the fleet (there are
   * none in memory), its frame already JSON text. At most once: never retried. Never rejects.
   */
  publishPush(principalId: string, frameJson: string): Promise<void>;
  /** Listens for the pushes other servers publish; returns the unsubscribe function. */
  onPush(listener: PushListener): () => void;
  /**
   * Present where a store script can broadcast an event in the same step as the writes it
   * announces (Redis with classic pub/sub, see `CacheStore.scripts`).
   */
  readonly fromScripts?: ScriptedBroadcast;
  close(): Promise<void>;
}

/**
 * How a store script broadcasts a revocation: it `PUBLISH`es {@link message} on {@link channel}
 * and the caller then calls {@link delivered}, which delivers the event on this server (whose
 * own subscriber ignores the message).
 *
 * @example
 * ```ts
 * const args = [broadcast.channel, broadcast.message(event)];
 * await cache.scripts.run(script, args);
 * broadcast.delivered(event);
 * ```
 */
export interface ScriptedBroadcast {
  readonly channel: string;
  /**
   * The text {@link RevocationBus.publish} would send for the event. It must depend on the event
   * alone: a caller may build the text of a kind of event once and fill in the keys itself.
   */
  message(event: CredentialsRevoked): string;
  delivered(event: CredentialsRevoked): void;
}


/**
 * The in-process bus: synchronous delivery, always live. Base of the Redis bus.
 *
 * @example
 * ```ts
 * const bus = new LocalRevocationBus(logger);
 * bus.subscribe((e) => console.log(e.sessionKeys.length));
 * await bus.publish({ kind: 'revoked', sessionKeys: [], jtis: ['…'] });
 * ```
 */
export class LocalRevocationBus implements RevocationBus {
  private readonly listeners = new Set<(event: CredentialsRevoked) => void>();
  private readonly gapListeners = new Set<() => void>();
  private readonly pushListeners = new Set<PushListener>();

  constructor(protected readonly logger: Logger) {}

  get live(): boolean {
    return true;
  }

  async publish(event: CredentialsRevoked): Promise<void> {
    this.deliver(event);
  }

  subscribe(listener: (event: CredentialsRevoked) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** No other server to reach in memory: the registry has delivered the push here already. */
  async publishPush(_principalId: string, _frameJson: string): Promise<void> {}

  onPush(listener: PushListener): () => void {
    this.pushListeners.add(listener);
    return () => this.pushListeners.delete(listener);
  }

  onGap(listener: () => void): () => void {
    this.gapListeners.add(listener);
    return () => this.gapListeners.delete(listener);
  }

  async close(): Promise<void> {
    this.listeners.clear();
    this.gapListeners.clear();
    this.pushListeners.clear();
  }

  /** Runs every listener; one that throws is logged and does not stop the others. */
  protected deliver(event: CredentialsRevoked): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(event);
      } catch (error) {
        this.logger.error('revocation listener threw', describeError(error));
      }
    }
  }

  /** Runs every push listener; one that throws is logged and does not stop the others. */
  protected deliverPush(principalId: string, frame: unknown): void {
    for (const listener of [...this.pushListeners]) {
      try {
        listener(principalId, frame);
      } catch (error) {
        this.logger.error('push listener threw', describeError(error));
      }
    }
  }

  protected signalGap(): void {
    for (const listener of [...this.gapListeners]) {
      try {
        listener();
      } catch (error) {
        this.logger.error('revocation gap listener threw', describeError(error));
      }
    }
  }
}
