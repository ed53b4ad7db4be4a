/**
 * One call that wires portcullis into a tsyringe container. This folder is the
 * composition root: it imports every other part of core, and nothing in core
 * imports it (only the entry files `index.ts` and `testing.ts` use it).
 */
import 'reflect-metadata';
import type { DependencyContainer } from 'tsyringe';
import { ACCOUNT_STORE } from '../account/account-store.js';
import { PostgresAccountStore } from '../account/postgres-account-store.js';
import { RedisAccountStore } from '../account/redis-account-store.js';
import { loadConfig } from '../config/load-config.js';
import { LOGGER_FACTORY, PORTCULLIS_CONFIG, PORTCULLIS_CONTAINER, SIGNING_KEY } from '../contracts/injection-tokens.js';
import type { LoggerFactory } from '../contracts/logger.js';
import type { PortcullisConfig } from '../contracts/portcullis-config.js';
import { AccessTokenIssuer, I_ACCESS_TOKEN_ISSUER } from '../jwt/access-token-issuer.js';
import { JwtTokenIssuer } from '../jwt/jwt-token-issuer.js';
import { JwtTokenValidator } from '../jwt/jwt-token-validator.js';
import { resolveSigningKey } from '../key/key-guard.js';
import { consoleLoggerFactory } from '../logging/logger.js';
import { PasswordHasher } from '../password/password-hasher.js';
import { ConnectionRegistry } from '../realtime/connection-registry.js';
import { GateDispatcher } from '../realtime/gate-dispatcher.js';
import { JwtAuth } from '../shield/jwt-auth.js';
import { RateLimiter } from '../shield/rate-limiter.js';
import { SessionAuth } from '../shield/session-auth.js';
import { ShieldEnforcer } from '../shield/shield-enforcer.js';
import type { SessionStores, SessionStoreOptions } from '../store/session-stores.js';
import { registerAccountServices } from './register-account-services.js';
import { registerSessionServices } from './register-session-services.js';

/**
 * Options of {@link registerPortcullis}; each defaults to the process's own.
 *
 * @example
 * ```ts
 * registerPortcullis(container, { config: loadConfig({ env: {}, tree }), loggers: silentLoggerFactory } satisfies PortcullisRegistrationOptions);
 * ```
 */
export interface PortcullisRegistrationOptions {
  /** Validated configuration; defaults to `loadConfig()` (file + environment). */
  config?: PortcullisConfig;
  /** Where log lines go; defaults to the console. */
  loggers?: LoggerFactory;
  /** Store options (test-only lifetimes, key prefix, timeouts). */
  stores?: SessionStoreOptions;
}

/**
 * What {@link registerPortcullis} set up; `close()` releases the stores.
 *
 * @example
 * ```ts
 * const { ready, close }: PortcullisRegistration = registerPortcullis(container);
 * await ready();
 * ```
 */
export interface PortcullisRegistration {
  readonly config: PortcullisConfig;
  /** Undefined unless `mode` is `jwt`. */
  readonly stores: SessionStores | undefined;
  /**
   * Resolves once the session stores and the account store portcullis built can
   * serve requests (the PostgreSQL account store creates its table here);
   * rejects with `unavailable` after `timeoutMs` (default 2000).
   */
  ready(timeoutMs?: number): Promise<void>;
  /** Closes the connections of every store portcullis built (never an `ACCOUNT_STORE` the application registered). */
  close(): Promise<void>;
}

/**
 * Registers portcullis in a container: the config, the logger factory, the
 * container itself (for shields and portals), the signing key (after the key
 * guard), the password hasher and the shield enforcer. With `svc:security:mode = jwt`
 * it also registers the `@RateLimit` counters on the cache provider, `JwtAuth`, `SessionAuth`, `JwtTokenValidator`, `JwtTokenIssuer`,
 * `AccessTokenIssuer` (also as {@link I_ACCESS_TOKEN_ISSUER}), `TokenSessionSync`,
 * the lockout store, the login service with its account store, and one
 * `GateDispatcher` and `ConnectionRegistry` shared by every transport (so server push
 * reaches connections on all of them). Throws the key
 * guard's error in production with a weak key, before anything listens.
 *
 * @example
 * ```ts
 * const portcullis = registerPortcullis(container);
 * await portcullis.ready();
 * const issuer = container.resolve(AccessTokenIssuer);
 * process.once('SIGTERM', () => void portcullis.close());
 * ```
 */
export function registerPortcullis(container: DependencyContainer, options: PortcullisRegistrationOptions = {}): PortcullisRegistration {
  const config = options.config ?? loadConfig();
  const loggers = options.loggers ?? consoleLoggerFactory;
  const key = resolveSigningKey(config, loggers.create('portcullis'));
  container.register(PORTCULLIS_CONFIG, { useValue: config });
  container.register(LOGGER_FACTORY, { useValue: loggers });
  container.register(SIGNING_KEY, { useValue: key });
  container.register(PORTCULLIS_CONTAINER, { useValue: container });
  container.register(PasswordHasher, { useValue: new PasswordHasher(config) });
  container.registerSingleton(ShieldEnforcer);
  if (config.security.mode !== 'jwt') {
    return { config, stores: undefined, ready: async () => {}, close: async () => {} };
  }
  container.registerSingleton(JwtTokenValidator);
  container.registerSingleton(JwtTokenIssuer);
  container.registerSingleton(AccessTokenIssuer);
  container.register(I_ACCESS_TOKEN_ISSUER, { useToken: AccessTokenIssuer });
  const stores = registerSessionServices(container, options.stores);
  const limiter = new RateLimiter(stores.cache);
  container.register(RateLimiter, { useValue: limiter });
  container.registerSingleton(JwtAuth);
  container.registerSingleton(SessionAuth);
  container.registerSingleton(GateDispatcher);
  container.registerSingleton(ConnectionRegistry);
  const ownsAccounts = !container.isRegistered(ACCOUNT_STORE, true);
  const accounts = registerAccountServices(container);
  const owned = ownsAccounts && (accounts instanceof RedisAccountStore || accounts instanceof PostgresAccountStore) ? accounts : undefined;
  return {
    config,
    stores,
    ready: async (timeoutMs = 2000) => {
      await Promise.all([stores.ready(timeoutMs), owned?.ready(timeoutMs)]);
    },
    close: async () => {
      limiter.close();
      await Promise.all([stores.close(), owned?.close()]);
    },
  };
}
