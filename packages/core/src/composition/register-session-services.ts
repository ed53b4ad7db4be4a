/**
 * DI registration of the session services in a tsyringe container.
 */
import { instanceCachingFactory, type DependencyContainer } from 'tsyringe';
import { LOGGER_FACTORY, PORTCULLIS_CONFIG, SIGNING_KEY } from '../contracts/injection-tokens.js';
import { UdpKeyring } from '../key/udp-keyring.js';
import { consoleLoggerFactory } from '../logging/logger.js';
import { TokenSessionSync } from '../session/token-session-sync.js';
import { LockoutStore } from '../store/lockout-store.js';
import { createSessionStores, SessionStores, type SessionStoreOptions } from '../store/session-stores.js';

/**
 * Builds the stores from the container's `PORTCULLIS_CONFIG` and registers
 * `SessionStores`, `TokenSessionSync`, `LockoutStore` and (unless registered already)
 * the `UdpKeyring` of the `SIGNING_KEY` as singletons (the logger factory
 * defaults to the console one when `LOGGER_FACTORY` is not registered). Answers the
 * stores: close them on shutdown.
 *
 * @example
 * ```ts
 * container.register(PORTCULLIS_CONFIG, { useValue: config });
 * const stores = registerSessionServices(container);
 * await stores.ready();
 * const sessions = container.resolve(TokenSessionSync);
 * process.once('SIGTERM', () => void stores.close());
 * ```
 */
export function registerSessionServices(container: DependencyContainer, options: SessionStoreOptions = {}): SessionStores {
  const config = container.resolve(PORTCULLIS_CONFIG);
  if (!container.isRegistered(LOGGER_FACTORY, true)) container.register(LOGGER_FACTORY, { useValue: consoleLoggerFactory });
  const stores = createSessionStores(config, { loggers: container.resolve(LOGGER_FACTORY), ...options });
  container.register(SessionStores, { useValue: stores });
  if (!container.isRegistered(UdpKeyring, true)) {
    container.register(UdpKeyring, { useFactory: instanceCachingFactory((c) => UdpKeyring.of(c.resolve(SIGNING_KEY))) });
  }
  container.registerSingleton(TokenSessionSync);
  container.registerSingleton(LockoutStore);
  return stores;
}
