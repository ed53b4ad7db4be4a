/**
 * Redis connections that fail fast and heal themselves: no offline queue (a command while
 * disconnected is refused at once instead of running later), a reconnect with capped
 * back-off, error listeners so a dropped socket never crashes the process, and one log
 * line per state change.
 */
import { createClient } from '@keyv/redis';
import type { Logger } from '../contracts/logger.js';
import { describeError } from '../errors/describe-error.js';
import { storeUnavailable } from './cache-store.js';

/** The node-redis client type `@keyv/redis` builds on. */
export type RedisClient = ReturnType<typeof createClient>;

/** Back-off between reconnect attempts: 50 ms doubling to at most 1 s, with jitter. */
export function reconnectDelayMs(retries: number): number {
  return Math.min(50 * 2 ** retries, 1000) + Math.floor(Math.random() * 50);
}

/**
 * Creates a client for `url`, starts connecting in the background and logs when the
 * connection is lost or restored (never the URL, which may hold a password).
 *
 * @example
 * ```ts
 * const client = openRedisClient('redis://127.0.0.1:6379', logger, 'commands');
 * await waitUntilReady(client, 2000);
 * ```
 */
export function openRedisClient(url: string, logger: Logger, role: string, base?: RedisClient): RedisClient {
  const client: RedisClient = base
    ? base.duplicate()
    : createClient({ url, disableOfflineQueue: true, socket: { connectTimeout: 2000, reconnectStrategy: reconnectDelayMs } });
  client.setMaxListeners(32);
  let down = false;
  client.on('error', (error: unknown) => {
    if (down) return;
    down = true;
    logger.warn('redis connection lost; session operations fail closed until it is back', { role, ...describeError(error) });
  });
  client.on('ready', () => {
    if (!down) return;
    down = false;
    logger.info('redis connection restored', { role });
  });
  client.connect().catch(() => {
    // reported through the 'error' listener; the client keeps reconnecting by itself
  });
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
export function waitUntilReady(client: RedisClient, timeoutMs: number): Promise<void> {
  if (client.isReady) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const onReady = () => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(() => {
      client.off('ready', onReady);
      reject(storeUnavailable(new Error(`redis not ready within ${timeoutMs} ms`)));
    }, timeoutMs);
    client.once('ready', onReady);
  });
}

/** A timer that fires this much later than asked means the event loop, not Redis, was slow. */
const LATE_TIMER_MS = 20;

/**
 * Runs one Redis operation: refused at once when the client is not connected, and
 * failed with `unavailable` when it errors or takes longer than `timeoutMs`.
 *
 * The timeout counts time this process could have read the reply. When the timer
 * fires late (a GC pause, a saturated event loop), the operation gets the lost time
 * once more before it fails, and it fails from `setImmediate`, after the socket reads
 * of the same loop turn: a server that falls behind does not turn its own lag into
 * `unavailable` for replies that are already there or about to be.
 *
 * @example
 * ```ts
 * const value = await guarded(client, 1000, () => client.get(key));
 * ```
 */
export async function guarded<T>(client: RedisClient, timeoutMs: number, operation: () => Promise<T>): Promise<T> {
  if (!client.isReady) throw storeUnavailable();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    const fail = () => reject(storeUnavailable(new Error(`redis operation exceeded ${timeoutMs} ms`)));
    const due = performance.now() + timeoutMs;
    timer = setTimeout(() => {
      const late = performance.now() - due;
      if (late > LATE_TIMER_MS) timer = setTimeout(() => setImmediate(fail), late);
      else setImmediate(fail);
    }, timeoutMs);
  });
  try {
    return await Promise.race([operation(), timeout]);
  } catch (error) {
    throw storeUnavailable(error);
  } finally {
    clearTimeout(timer);
  }
}

/** Closes a client without waiting on a dead server. Idempotent. */
export async function closeRedisClient(client: RedisClient): Promise<void> {
  if (!client.isOpen) return;
  if (client.isReady) await client.close().catch(() => client.destroy());
  else client.destroy();
}
