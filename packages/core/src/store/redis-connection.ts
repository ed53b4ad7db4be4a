/**
 * Redis connections that fail fast and heal themselves: no offline queue (a command while
 * disconnected is refused at once instead of running later), a reconnect with capped
 * back-off, error listeners so a dropped socket never crashes the process, and one log
 * line per state change.
 */
import { createClient, createCluster, createSentinel } from '@keyv/redis';
import type { Logger } from '../contracts/logger.js';
import { ConfigError } from '../errors/portcullis-error.js';
import { describeError } from '../errors/describe-error.js';
import { EventLoopLag } from '../runtime/event-loop-lag.js';
import { storeUnavailable } from './cache-store.js';

/**
 * The node-redis client type `@keyv/redis` builds on. A cluster or sentinel client answers
 * the same command methods (routed to the right primary), so the stores use this one type;
 * {@link topologyOf} tells them apart where they differ (cross-slot batches, pub/sub).
 */
export type RedisClient = ReturnType<typeof createClient>;

/** How the Redis servers are laid out (`svc:persistence:cache:topology`). */
export type RedisTopology = 'single' | 'cluster' | 'sentinel';

/**
 * Where a store's Redis is: the `url` of one server, or with `cluster`/`sentinel` the cluster
 * nodes to start from, or the sentinels, in `nodes` (then only the user, password and scheme of `url` are used).
 *
 * @example
 * ```ts
 * const target: RedisTarget = { url: 'redis://:secret@x', topology: 'cluster', nodes: [{ host: '10.0.0.5', port: 7000 }] };
 * ```
 */
export interface RedisTarget {
  readonly url: string;
  readonly topology?: RedisTopology;
  readonly nodes?: readonly { readonly host: string; readonly port: number }[];
  /** The name the sentinels know the primary by. Default `mymaster`. */
  readonly sentinelMaster?: string;
}

const topologies = new WeakMap<object, RedisTopology>();
const closing = new WeakSet<object>();
/** Cluster clients that finished discovering the slots (a cluster client is open before that). */
const discovered = new WeakSet<object>();

/** The topology a client of {@link openRedisClient} was made for. */
export function topologyOf(client: RedisClient): RedisTopology {
  return topologies.get(client) ?? 'single';
}

/** Whether commands can be sent now (a cluster client has no `isReady`: it is usable once it knows the slots). */
function usable(client: RedisClient): boolean {
  return topologyOf(client) === 'cluster' ? client.isOpen && discovered.has(client) : client.isReady;
}

/** User, password and TLS of `url`, for every connection of a cluster or sentinel set; the URL is never quoted. */
function credentialsOf(url: string): { username?: string; password?: string; tls: boolean } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ConfigError('svc:persistence:cache:url', 'is not a valid redis:// or rediss:// URL');
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') throw new ConfigError('svc:persistence:cache:url', 'must be a redis:// or rediss:// URL');
  const username = parsed.username ? decodeURIComponent(parsed.username) : undefined;
  const password = parsed.password ? decodeURIComponent(parsed.password) : undefined;
  return { ...(username ? { username } : {}), ...(password ? { password } : {}), tls: parsed.protocol === 'rediss:' };
}

/**
 * What a connection's socket buffers before node-redis holds back the rest of a loop turn's
 * commands. node-redis writes a turn's commands when the turn ends and stops at the socket's
 * high-water mark (16 KiB by default); the rest leave one such batch per later turn, and on a
 * saturated server each of those turns can last seconds, which the commands spent unsent and
 * counted against their timeouts. At this size every command a turn can queue under the
 * default `maxPendingOperations` (2,048 session reads of 64 keys at most) leaves at once.
 */
const WRITE_BUFFER_BYTES = 16 * 1024 * 1024;

function createFor(target: RedisTarget): RedisClient {
  const topology = target.topology ?? 'single';
  // node-redis hands its socket options to net.connect, which takes the high-water mark too.
  const common = { connectTimeout: 2000, reconnectStrategy: reconnectDelayMs, writableHighWaterMark: WRITE_BUFFER_BYTES };
  if (topology === 'single') return createClient({ url: target.url, disableOfflineQueue: true, socket: common });
  const nodes = target.nodes ?? [];
  if (nodes.length === 0) throw new ConfigError('svc:persistence:cache:nodes', `must name at least one host:port with topology "${topology}"`);
  const { tls, ...auth } = credentialsOf(target.url);
  const socket = { ...common, ...(tls ? { tls: true as const } : {}) };
  const nodeOptions = { ...auth, disableOfflineQueue: true, socket };
  const client =
    topology === 'cluster'
      ? createCluster({ rootNodes: nodes.map((n) => ({ socket: { host: n.host, port: n.port } })), defaults: nodeOptions })
      : createSentinel({
          name: target.sentinelMaster ?? 'mymaster',
          sentinelRootNodes: nodes.map((n) => ({ host: n.host, port: n.port })),
          nodeClientOptions: nodeOptions,
          sentinelClientOptions: nodeOptions,
        });
  const commands = client as unknown as RedisClient;
  topologies.set(commands, topology);
  return commands;
}

/** Back-off between reconnect attempts: 50 ms doubling to at most 1 s, with jitter. */
export function reconnectDelayMs(retries: number): number {
  return Math.min(50 * 2 ** retries, 1000) + Math.floor(Math.random() * 50);
}

/**
 * Creates a client for `target` (a URL, or a cluster or sentinel set), starts connecting in
 * the background and logs when the connection is lost or restored (never the URL, which may
 * hold a password). `base` duplicates a single-server client.
 *
 * @throws ConfigError naming the setting when a cluster or sentinel target is incomplete.
 * @example
 * ```ts
 * const client = openRedisClient('redis://127.0.0.1:6379', logger, 'commands');
 * await waitUntilReady(client, 2000);
 * ```
 */
export function openRedisClient(target: string | RedisTarget, logger: Logger, role: string, base?: RedisClient): RedisClient {
  const client: RedisClient = base ? base.duplicate() : createFor(typeof target === 'string' ? { url: target } : target);
  const topology = topologyOf(client);
  client.setMaxListeners(32);
  if (topology === 'cluster') {
    client.on('connect', () => discovered.add(client));
    client.on('disconnect', () => discovered.delete(client));
  }
  let down = false;
  client.on('error', (error: unknown) => {
    if (down) return;
    down = true;
    logger.warn('redis connection lost; session operations fail closed until it is back', { role, ...describeError(error) });
  });
  const restored = () => {
    if (!down) return;
    down = false;
    logger.info('redis connection restored', { role });
  };
  client.on('ready', restored);
  if (topology === 'cluster') client.on('node-ready', restored);
  if (topology === 'sentinel') client.on('topology-change', restored);
  const connect = (retries: number): void => {
    client.connect().catch(() => {
      // Reported through the 'error' listener. A single client keeps reconnecting by itself;
      // a cluster or sentinel client gives up when its first discovery fails, so try again.
      if (topology !== 'single' && !closing.has(client) && !client.isOpen) setTimeout(() => connect(retries + 1), reconnectDelayMs(retries)).unref();
    });
  };
  connect(0);
  return client;
}

/**
 * Resolves when the client is ready; rejects with `unavailable` after `timeoutMs`.
 *
 * @example
 * ```ts
 * await waitUntilReady(client, 2000);
 * ```
 */
export async function waitUntilReady(client: RedisClient, timeoutMs: number): Promise<void> {
  // Polled: a single client says 'ready', a cluster or sentinel client has no one such event.
  const deadline = performance.now() + timeoutMs;
  while (!usable(client)) {
    if (performance.now() >= deadline) throw storeUnavailable(new Error(`redis not ready within ${timeoutMs} ms`));
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** A timer that fires this much later than asked means the event loop, not Redis, was slow. */
const LATE_TIMER_MS = 20;

/** On a cluster, an operation waits at most this many timeouts, and as many again of stalled time. */
const CLUSTER_MAX_WAIT_TIMEOUTS = 5;

/** When this process last read a reply on each client (`performance.now()`). */
const lastReplyAt = new WeakMap<RedisClient, number>();

/**
 * Runs one Redis operation: refused at once when the client is not connected, and
 * failed with `unavailable` when it errors or when Redis sent it no reply in time.
 *
 * "In time" counts time in which this process could have read the reply:
 * - node-redis writes the commands asked for in a loop turn from `setImmediate`, when the
 *   turn ends (all of them: see `WRITE_BUFFER_BYTES`): an operation's time runs at least from
 *   then, so one asked for early in a long turn is not failed for the time its command waited
 *   unsent.
 * - When a timer fires late (a GC pause, a saturated event loop), the operation gets the
 *   lost time back, and it fails from `setImmediate`, after the socket reads of the same
 *   loop turn.
 * - While this process is behind (a timer of this operation fired late, or the shared
 *   {@link EventLoopLag} found the loop behind within the last `timeoutMs`) and keeps
 *   reading replies on the client, an operation still waiting is behind replies not read
 *   yet (replies on a connection come in order), not lost: its timeout runs from the last
 *   reply read. A server that keeps up fails a slow Redis's operations after `timeoutMs`,
 *   so the queue bound and the callers see the slowness at once.
 * - A cluster client is one client over several shards, so replies from live shards say
 *   nothing of a shard that stopped answering: there an operation waits at most
 *   {@link CLUSTER_MAX_WAIT_TIMEOUTS} times `timeoutMs`, plus as much again of stalled time.
 *
 * `onTimeout` hears of each operation failed for want of a reply.
 *
 * @example
 * ```ts
 * const value = await guarded(client, 1000, () => client.get(key));
 * ```
 */
export async function guarded<T>(client: RedisClient, timeoutMs: number, operation: () => Promise<T>, onTimeout?: () => void): Promise<T> {
  if (!usable(client)) throw storeUnavailable();
  const started = performance.now();
  const latest = topologyOf(client) === 'cluster' ? started + timeoutMs * CLUSTER_MAX_WAIT_TIMEOUTS : Infinity;
  let deadline = started + timeoutMs;
  let lost = 0;
  let firedLate = false;
  let settled = false;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    const wait = (ms: number): void => {
      const due = performance.now() + ms;
      timer = setTimeout(() => {
        const now = performance.now();
        const late = now - due;
        firedLate = late > LATE_TIMER_MS;
        if (firedLate) {
          // The event loop, not Redis, kept this timer waiting: that time is given back.
          lost += late;
          deadline = Math.max(deadline, now + late);
        }
        setImmediate(decide);
      }, ms);
    };
    const decide = (): void => {
      if (settled) return;
      const now = performance.now();
      // Behind, with a reply read since this operation began: the queue it waits in is moving.
      const lastReply = lastReplyAt.get(client) ?? started;
      const behind = firedLate || EventLoopLag.shared().behindWithin(timeoutMs);
      if (behind && lastReply > started) deadline = Math.max(deadline, lastReply + timeoutMs);
      const failAt = Math.min(deadline, latest + Math.min(lost, timeoutMs * CLUSTER_MAX_WAIT_TIMEOUTS));
      if (now < failAt) return wait(failAt - now);
      onTimeout?.();
      reject(storeUnavailable(new Error(`redis operation exceeded ${timeoutMs} ms`)));
    };
    wait(timeoutMs);
  });
  try {
    const answered = operation().then((value) => {
      lastReplyAt.set(client, performance.now());
      return value;
    });
    // Runs in the check phase that sends this turn's commands (node-redis writes them from
    // setImmediate, all at once, see WRITE_BUFFER_BYTES), so the time runs from when they left;
    // asked for from within a check phase, from the next one, a turn later at most.
    setImmediate(() => {
      deadline = Math.max(deadline, performance.now() + timeoutMs);
    });
    return await Promise.race([answered, timeout]);
  } catch (error) {
    throw storeUnavailable(error);
  } finally {
    settled = true;
    clearTimeout(timer);
  }
}

/** Closes a client without waiting on a dead server. Idempotent. */
export async function closeRedisClient(client: RedisClient): Promise<void> {
  closing.add(client);
  if (!client.isOpen) return;
  if (usable(client)) await client.close().catch(() => client.destroy());
  else client.destroy();
}
