/**
 * DI registration of the login service and its account store and captcha verifier.
 */
import 'reflect-metadata';
import type { DependencyContainer } from 'tsyringe';
import { ACCOUNT_STORE, type AccountStore } from '../account/account-store.js';
import { InMemoryAccountStore } from '../account/in-memory-account-store.js';
import { LoginService } from '../account/login-service.js';
import { PostgresAccountStore } from '../account/postgres-account-store.js';
import { RedisAccountStore } from '../account/redis-account-store.js';
import { CAPTCHA_VERIFIER } from '../captcha/captcha-verifier.js';
import { SiteverifyCaptchaVerifier } from '../captcha/siteverify-captcha-verifier.js';
import { LOGGER_FACTORY, PORTCULLIS_CONFIG } from '../contracts/injection-tokens.js';
import type { LoggerFactory } from '../contracts/logger.js';
import { silentLoggerFactory } from '../logging/logger.js';
import { RedisCacheStore } from '../store/redis-cache-store.js';
import { SessionStores } from '../store/session-stores.js';

/**
 * Registers `LoginService` (singleton) and, unless the application registered
 * its own, an `ACCOUNT_STORE` and a `CAPTCHA_VERIFIER`. The default account
 * store is a PostgreSQL table when `svc:persistence:accounts:provider` is
 * `postgres`; otherwise it follows `svc:persistence:cache:provider`: in memory,
 * or Redis (sharing the session stores' connection when `registerSessionServices`
 * ran first).
 * Applications with a user database register their own `AccountStore` first.
 * Answers the account store.
 *
 * @example
 * ```ts
 * container.register(PORTCULLIS_CONFIG, { useValue: config });
 * registerSessionServices(container);
 * registerAccountServices(container);
 * const logins = container.resolve(LoginService);
 * ```
 */
export function registerAccountServices(container: DependencyContainer): AccountStore {
  if (!container.isRegistered(ACCOUNT_STORE, true)) {
    container.register(ACCOUNT_STORE, { useValue: createAccountStore(container) });
  }
  if (!container.isRegistered(CAPTCHA_VERIFIER, true)) {
    container.register(CAPTCHA_VERIFIER, { useValue: new SiteverifyCaptchaVerifier(container.resolve(PORTCULLIS_CONFIG)) });
  }
  container.registerSingleton(LoginService);
  return container.resolve(ACCOUNT_STORE);
}

function createAccountStore(container: DependencyContainer): AccountStore {
  const config = container.resolve(PORTCULLIS_CONFIG);
  const loggers: LoggerFactory = container.isRegistered(LOGGER_FACTORY, true) ? container.resolve(LOGGER_FACTORY) : silentLoggerFactory;
  const logger = loggers.create('portcullis:accounts');
  if (config.persistence.accounts.provider === 'postgres') return new PostgresAccountStore({ url: config.persistence.accounts.url.reveal() }, logger);
  if (config.persistence.cache.provider !== 'redis') return new InMemoryAccountStore();
  const stores = container.isRegistered(SessionStores, true) ? container.resolve(SessionStores) : undefined;
  const shared = stores?.cache instanceof RedisCacheStore ? stores.cache.client : undefined;
  const keyPrefix = stores?.options.keyPrefix;
  return new RedisAccountStore(shared ? { client: shared, keyPrefix } : { ...config.persistence.cache, keyPrefix }, logger);
}
