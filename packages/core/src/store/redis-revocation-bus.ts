/**
 * Revocation events, and pushes to a principal's connections, over Redis pub/sub: sharded
 * pub/sub (SPUBLISH/SSUBSCRIBE) on a cluster, classic pub/sub otherwise. A subscribed
 * connection can run no other command, so on a single server the bus keeps its own duplicate
 * of the command connection; cluster and sentinel clients keep their own pub/sub connections
 * (following the shard or the primary). While that subscriber is
 * down the bus is not `live` and near caches stay empty; when it drops or comes back the
 * bus signals a gap so they are cleared, because events published meanwhile are lost.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from '../contracts/logger.js';
import type { CredentialsRevoked, SessionSuccessor } from '../contracts/sessions.js';
import { storeUnavailable } from './cache-store.js';
import { closeRedisClient, guarded, openRedisClient, topologyOf, type RedisClient } from './redis-connection.js';
import { LocalRevocationBus, type ScriptedBroadcast } from './revocation-bus.js';

interface BusMessage {
  /** The publishing bus, so it does not deliver its own events twice. */
  readonly o: string;
  readonly e: CredentialsRevoked;
}

/** A push on the same channel (`{"o","p","f"}`): servers of older releases ignore it, having no `e`. */
interface PushMessage {
  readonly o: string;
  /** The principal. */
  readonly p: string;
  /** The frame. */
  readonly f: unknown;
}

const isStringArray = (value: unknown): value is string[] => Array.isArray(value) && value.every((v) => typeof v === 'string');

const isSuccessorArray = (value: unknown): value is SessionSuccessor[] =>
  Array.isArray(value) && value.every((v) => typeof v?.from === 'string' && typeof v?.sealed === 'string');

function readMessage(text: string): BusMessage | PushMessage | undefined {
  let message: unknown;
  try {
    message = JSON.parse(text);
  } catch {
    return undefined;
  }
  const { o, e, p, f } = (message ?? {}) as { o?: unknown; e?: { sessionKeys?: unknown; jtis?: unknown; families?: unknown; principalId?: unknown; successors?: unknown }; p?: unknown; f?: unknown };
  if (typeof o === 'string' && e === undefined && typeof p === 'string' && f !== undefined) return { o, p, f };
  if (typeof o !== 'string' || !e || !isStringArray(e.sessionKeys) || !isStringArray(e.jtis)) return undefined;
  if (e.principalId !== undefined && typeof e.principalId !== 'string') return undefined;
  if (e.families !== undefined && !isStringArray(e.families)) return undefined;
  // Read by shape, not by `kind`, so a server of an older release is still understood.
  const event: { -readonly [K in keyof CredentialsRevoked]: CredentialsRevoked[K] } = { kind: 'revoked', sessionKeys: e.sessionKeys, jtis: e.jtis };
  if (e.families !== undefined && e.families.length > 0) event.families = e.families;
  if (e.principalId !== undefined) event.principalId = e.principalId;
  // Successors of another shape (an older release's) are dropped: those connections close.
  if (isSuccessorArray(e.successors)) event.successors = e.successors.map(({ from, sealed }) => Object.freeze({ from, sealed }));
  return { o, e: Object.freeze(event) };
}

/**
 * Fleet-wide {@link RevocationBus} on a Redis channel.
 *
 * @example
 * ```ts
 * const bus = new RedisRevocationBus(client, 'portcullis:revocations', logger, 1000);
 * await bus.whenLive(2000);
 * ```
 */
export class RedisRevocationBus extends LocalRevocationBus {
  private readonly origin = randomUUID();
  /** How every message this bus publishes begins (after `origin`, which it reads): its own are dropped before they are parsed. */
  private readonly ownPrefix = `{"o":${JSON.stringify(this.origin)},`;
  private readonly subscriber: RedisClient;
  private readonly sharded: boolean;
  /** Cluster and sentinel clients share the command client for pub/sub; single servers get a duplicate. */
  private readonly ownSubscriber: boolean;
  private subscribed = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private trusted = false;
  private readonly waiters = new Set<() => void>();

  constructor(
    private readonly publisher: RedisClient,
    private readonly channel: string,
    logger: Logger,
    private readonly timeoutMs: number,
  ) {
    super(logger);
    const topology = topologyOf(publisher);
    this.sharded = topology === 'cluster';
    this.ownSubscriber = topology === 'single';
    this.subscriber = this.ownSubscriber ? openRedisClient('', logger, 'revocation subscriber', publisher) : publisher;
    this.fromScripts = this.sharded
      ? undefined
      : {
          channel,
          message: (event) => JSON.stringify({ o: this.origin, e: event } satisfies BusMessage),
          delivered: (event) => this.deliver(event),
        };
    this.subscriber.on('error', () => this.onLost());
    if (this.ownSubscriber) {
      this.subscriber.on('ready', () => void this.onReady());
      this.subscriber.on('end', () => this.onLost());
    } else {
      // No one 'ready' event here: a node lost or a failover is a gap; trust returns once subscribed again.
      for (const event of ['node-error', 'node-disconnect', 'topology-change']) this.subscriber.on(event, () => this.onLost());
      this.retryUntilReady();
    }
  }

  readonly fromScripts: ScriptedBroadcast | undefined;

  override get live(): boolean {
    return this.trusted && (this.ownSubscriber ? this.subscriber.isReady : this.subscriber.isOpen);
  }

  override async publish(event: CredentialsRevoked): Promise<void> {
    this.deliver(event);
    try {
      const text = JSON.stringify({ o: this.origin, e: event } satisfies BusMessage);
      await this.send(text);
    } catch {
      // The revocation itself is stored; other servers drop their near caches when their own
      // subscriber loses Redis, and otherwise within session:near-cache-seconds.
      this.logger.warn('revocation stored but not broadcast to the fleet');
    }
  }

  /** Publishes on the revocation channel, so a push follows every revocation this server published before it. */
  override async publishPush(principalId: string, frameJson: string): Promise<void> {
    const message = `{"o":${JSON.stringify(this.origin)},"p":${JSON.stringify(principalId)},"f":${frameJson}}`;
    try {
      await this.send(message);
    } catch {
      this.logger.warn('push delivered on this server only: not broadcast to the fleet');
    }
  }

  /** Sharded on a cluster (the message stays in the channel's shard), classic otherwise. */
  private send(text: string): Promise<unknown> {
    return guarded(this.publisher, this.timeoutMs, () => (this.sharded ? this.publisher.sPublish(this.channel, text) : this.publisher.publish(this.channel, text)));
  }

  /** Resolves once the channel is subscribed; rejects with `unavailable` after `timeoutMs`. */
  whenLive(timeoutMs: number): Promise<void> {
    if (this.live) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const done = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        this.waiters.delete(done);
        reject(storeUnavailable(new Error(`revocation channel not subscribed within ${timeoutMs} ms`)));
      }, timeoutMs);
      this.waiters.add(done);
    });
  }

  override async close(): Promise<void> {
    this.trusted = false;
    this.closed = true;
    clearTimeout(this.retryTimer);
    if (this.ownSubscriber) await closeRedisClient(this.subscriber);
    await super.close();
  }

  private closed = false;

  /** Cluster and sentinel: subscribes once the client is open, and checks again after every gap. */
  private retryUntilReady(): void {
    clearTimeout(this.retryTimer);
    if (this.closed) return;
    this.retryTimer = setTimeout(() => {
      if (this.closed) return;
      if (this.subscriber.isOpen) void this.onReady().then((ok) => ok || this.retryUntilReady());
      else this.retryUntilReady();
    }, 100);
    this.retryTimer.unref();
  }

  private readonly listener = (text: string) => this.receive(text);

  /** Subscribes if not yet done and trusts the channel again; false when subscribing failed (tried again later). */
  private async onReady(): Promise<boolean> {
    if (!this.subscribed) {
      try {
        if (this.sharded) await this.subscriber.sSubscribe(this.channel, this.listener);
        else await this.subscriber.subscribe(this.channel, this.listener);
        this.subscribed = true;
      } catch {
        return false; // tried again on the next 'ready'
      }
    }
    if (!this.ownSubscriber) {
      // The client resubscribes by itself after a node or primary change; confirm it answers before trusting.
      try {
        await guarded(this.publisher, this.timeoutMs, () => this.publisher.ping());
      } catch {
        return false;
      }
    }
    this.trusted = true;
    this.signalGap();
    for (const waiter of [...this.waiters]) waiter();
    this.waiters.clear();
    return true;
  }

  private onLost(): void {
    if (!this.ownSubscriber) this.retryUntilReady();
    if (!this.trusted) return;
    this.trusted = false;
    this.signalGap();
  }

  private receive(text: string): void {
    if (text.startsWith(this.ownPrefix)) return;
    const message = readMessage(text);
    if (!message || message.o === this.origin) return;
    if ('e' in message) this.deliver(message.e);
    else this.deliverPush(message.p, message.f);
  }
}
