/**
 * Builds the stores sessions and lockout run on from configuration:
 * `svc:persistence:cache:provider` picks memory or Redis for sessions, `lockout:store`
 * picks memory or the Redis backplane for lockout counters (one Redis connection serves
 * both when both use it).
 */
import type { LoggerFactory } from '../contracts/logger.js';
import type { PortcullisConfig } from '../contracts/portcullis-config.js';
import { silentLoggerFactory } from '../logging/logger.js';
import type { CacheStore } from './cache-store.js';
import { MemoryCacheStore } from './memory-cache-store.js';
import { RedisCacheStore } from './redis-cache-store.js';

/**
 * Options of {@link createSessionStores}.
 *
 * @example
 * ```ts
 * const stores = createSessionStores(config, { keyPrefix: 'game', operationTimeoutMs: 500 } satisfies SessionStoreOptions);
 * ```
 */
export interface SessionStoreOptions {
  /** Where connection state changes are logged. Default: silent. */
  readonly loggers?: LoggerFactory;
  /** Redis key and channel prefix; separates apps (or test runs) sharing one Redis. Default `portcullis`. */
  readonly keyPrefix?: string;
  /** A Redis operation taking longer fails with `unavailable`. Default 1000 ms. */
  readonly operationTimeoutMs?: number;
  /**
   * Redis operations waiting for replies at once. When Redis is slow, an operation beyond it
   * fails with `unavailable` before anything is sent, instead of waiting out its timeout in a
   * queue that only grows. Revocation broadcasts never count against it. Default 2048.
   */
  readonly maxPendingOperations?: number;
  /**
   * For tests: session pair lifetimes in milliseconds instead of `session:access-minutes`
   * and `session:refresh-days`, so expiry on a real Redis takes milliseconds.
   */
  readonly sessionLifetimesMs?: { readonly access: number; readonly refresh: number };
  /** For tests: lockout window and lock duration in milliseconds instead of `lockout:window-minutes` and `lockout:lock-minutes`. */
  readonly lockoutTimesMs?: { readonly window: number; readonly lock: number };
}

/**
 * The stores of one process: `cache` for sessions and token markers, `lockout` for
 * failure counters (the same object when both use the same provider).
 *
 * @example
 * ```ts
 * const stores = createSessionStores(config, { loggers: consoleLoggerFactory });
 * await stores.ready();
 * // … on shutdown
 * await stores.close();
 * ```
 */
export class SessionStores {
  constructor(
    readonly cache: CacheStore,
    readonly lockout: CacheStore,
    readonly options: SessionStoreOptions = {},
  ) {}

  /** Resolves once every store can serve requests; rejects with `unavailable` after `timeoutMs`. */
  async ready(timeoutMs = 2000): Promise<void> {
    await Promise.all([...new Set([this.cache, this.lockout])].map((store) => store.ready(timeoutMs)));
  }

  /** Closes connections and timers of every store. Idempotent. */
  async close(): Promise<void> {
    await Promise.all([...new Set([this.cache, this.lockout])].map((store) => store.close()));
  }
}

/**
 * Creates the stores `config` asks for. Redis connections start in the background; call
 * `ready()` to wait for them (operations fail with `unavailable` until then).
 *
 * @example
 * ```ts
 * const stores = createSessionStores(loadConfig(), { loggers: consoleLoggerFactory });
 * const sessions = new TokenSessionSync(config, validator, issuer, stores, consoleLoggerFactory, new UdpKeyring(signingKey.keyObject));
 * ```
 */
export function createSessionStores(config: PortcullisConfig, options: SessionStoreOptions = {}): SessionStores {
  const loggers = options.loggers ?? silentLoggerFactory;
  const logger = loggers.create('portcullis:store');
  let redis: RedisCacheStore | undefined;
  const useRedis = () =>
    (redis ??= new RedisCacheStore(
      {
        ...config.persistence.cache,
        keyPrefix: options.keyPrefix,
        operationTimeoutMs: options.operationTimeoutMs,
        maxPendingOperations: options.maxPendingOperations,
        onEvictingPolicy: config.production ? 'refuse' : 'warn',
      },
      logger,
    ));
  const cache = config.persistence.cache.provider === 'redis' ? useRedis() : new MemoryCacheStore(logger);
  const lockout = config.security.lockout.store === 'backplane' ? useRedis() : cache.provider === 'inmemory' ? cache : new MemoryCacheStore(logger);
  return new SessionStores(cache, lockout, options);
}
