/**
 * A real in-memory portcullis stack in a child tsyringe container, for the
 * shield and real-time tests: config, key, issuers, validator, TokenSessionSync.
 */
import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { container as rootContainer, type DependencyContainer } from 'tsyringe';
import { registerSessionServices } from '../../src/composition/register-session-services.js';
import { loadConfig } from '../../src/config/load-config.js';
import type { AuthContext, Transport } from '../../src/contracts/auth-context.js';
import { LOGGER_FACTORY, PORTCULLIS_CONFIG, SIGNING_KEY, PORTCULLIS_CONTAINER } from '../../src/contracts/injection-tokens.js';
import type { Logger, LoggerFactory } from '../../src/contracts/logger.js';
import type { PortcullisConfig } from '../../src/contracts/portcullis-config.js';
import { JwtTokenIssuer } from '../../src/jwt/jwt-token-issuer.js';
import { resolveSigningKey } from '../../src/key/key-guard.js';
import { TokenSessionSync } from '../../src/session/token-session-sync.js';
import type { SessionStores } from '../../src/store/session-stores.js';

/** Every line logged, to assert that nothing secret was written. */
export interface LogLine {
  readonly category: string;
  readonly level: string;
  readonly message: string;
  readonly fields: Record<string, unknown> | undefined;
}

export interface ShieldFixture {
  readonly container: DependencyContainer;
  readonly config: PortcullisConfig;
  readonly sessions: TokenSessionSync;
  readonly issuer: JwtTokenIssuer;
  readonly stores: SessionStores;
  readonly logs: LogLine[];
  /** A fresh JWT access token for `subject` with optional custom claims. */
  jwt(subject: string, claims?: Record<string, unknown>): string;
  /** A fresh session token for `subject` (a JWT upgraded through TokenSessionSync). */
  session(subject: string, claims?: Record<string, unknown>): Promise<string>;
  close(): Promise<void>;
}

/** A Redis URL where nothing listens: a store outage, for real. */
export const UNREACHABLE_REDIS = { SVC__PERSISTENCE__CACHE__PROVIDER: 'redis', SVC__PERSISTENCE__CACHE__URL: 'redis://127.0.0.1:1' };

/**
 * Builds the stack; call `close()` in `afterEach`. With `waitForStore: false` it
 * does not wait for the store, so a fixture on {@link UNREACHABLE_REDIS} can be built.
 */
export async function createShieldFixture(env: Record<string, string> = {}, { waitForStore = true } = {}): Promise<ShieldFixture> {
  const config = loadConfig({
    env: { SVC__SECURITY__MODE: 'jwt', SVC__SECURITY__KEY: randomBytes(32).toString('base64'), ...env },
    tree: {},
  });
  const logs: LogLine[] = [];
  const loggers: LoggerFactory = {
    create(category: string): Logger {
      const at = (level: string) => (message: string, fields?: Record<string, unknown>) => void logs.push({ category, level, message, fields });
      return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
    },
  };
  const container = rootContainer.createChildContainer();
  container.register(PORTCULLIS_CONFIG, { useValue: config });
  container.register(LOGGER_FACTORY, { useValue: loggers });
  container.register(SIGNING_KEY, { useValue: resolveSigningKey(config, loggers.create('test')) });
  container.register(PORTCULLIS_CONTAINER, { useValue: container });
  const stores = registerSessionServices(container);
  if (waitForStore) await stores.ready();
  const sessions = container.resolve(TokenSessionSync);
  const issuer = container.resolve(JwtTokenIssuer);
  const jwt = (subject: string, claims?: Record<string, unknown>) => issuer.issueLoginPair(subject, claims).accessToken;
  return {
    container,
    config,
    sessions,
    issuer,
    stores,
    logs,
    jwt,
    session: async (subject, claims) => (await sessions.upgrade(jwt(subject, claims))).accessToken,
    close: async () => {
      await sessions.close();
      await stores.close();
    },
  };
}

/** The context of a request from client `c1` at 127.0.0.1 on `transport`, presenting `credential` (with the connection's `memo`, if any). */
export function authContext(transport: Transport, credential: string | undefined, memo?: Map<unknown, unknown>): AuthContext {
  return { transport, credential, clientId: 'c1', remoteAddress: '127.0.0.1', memo };
}
