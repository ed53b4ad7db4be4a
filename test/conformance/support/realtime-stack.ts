/**
 * One "server" of the real-time tests: a child tsyringe container with a test
 * configuration, session services on memory or on the test Redis, the gate
 * dispatcher with the test portal, and the connection registry. Two stacks built
 * with the same key prefix on Redis are two servers of one fleet.
 */
import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { container as rootContainer, type DependencyContainer } from 'tsyringe';
import {
  ConnectionRegistry,
  GateDispatcher,
  JwtTokenIssuer,
  LOGGER_FACTORY,
  loadConfig,
  PORTCULLIS_CONFIG,
  PORTCULLIS_CONTAINER,
  registerSessionServices,
  resolveSigningKey,
  SIGNING_KEY,
  silentLoggerFactory,
  TokenSessionSync,
  type PortalClass,
  type SessionStoreOptions,
} from '@portcullis/core';
import { TestGamePortal } from './test-portal.js';

export type ProviderName = 'inmemory' | 'redis';

/** 32 bytes of key, base64: good enough for tests, never for production. */
export const TEST_KEY = Buffer.alloc(32, 9).toString('base64');

export interface RealtimeStack {
  readonly container: DependencyContainer;
  readonly dispatcher: GateDispatcher;
  readonly registry: ConnectionRegistry;
  readonly sessions: TokenSessionSync;
  readonly keyPrefix: string;
  /** A JWT access token for `sub`. */
  jwt(sub: string, claims?: Record<string, unknown>): string;
  /** A session access token for `sub` (a fresh JWT upgraded). */
  session(sub: string): Promise<string>;
  close(): Promise<void>;
}

export interface StackOptions {
  readonly provider?: ProviderName;
  readonly redisUrl?: string | null;
  /** Same prefix on the same Redis = same fleet. */
  readonly keyPrefix?: string;
  readonly portals?: readonly PortalClass[];
  /** Session store options beyond the key prefix (a bounded Redis queue, a timeout). */
  readonly stores?: Omit<SessionStoreOptions, 'keyPrefix'>;
}

export async function createRealtimeStack(options: StackOptions = {}): Promise<RealtimeStack> {
  const provider = options.provider ?? 'inmemory';
  const keyPrefix = options.keyPrefix ?? `rt-${randomUUID()}`;
  const config = loadConfig({
    env: {},
    tree: {
      svc: {
        security: { mode: 'jwt', key: TEST_KEY },
        persistence: { cache: { provider, url: options.redisUrl ?? 'redis://127.0.0.1:1' } },
      },
    },
  });
  const container = rootContainer.createChildContainer();
  container.register(PORTCULLIS_CONFIG, { useValue: config });
  container.register(SIGNING_KEY, { useValue: resolveSigningKey(config, silentLoggerFactory.create('test')) });
  container.register(LOGGER_FACTORY, { useValue: silentLoggerFactory });
  container.register(PORTCULLIS_CONTAINER, { useValue: container });
  const stores = registerSessionServices(container, { ...options.stores, keyPrefix });
  await stores.ready();
  const sessions = container.resolve(TokenSessionSync);
  const issuer = container.resolve(JwtTokenIssuer);
  const dispatcher = container.resolve(GateDispatcher).register(...(options.portals ?? [TestGamePortal]));
  const registry = container.resolve(ConnectionRegistry);
  return {
    container,
    dispatcher,
    registry,
    sessions,
    keyPrefix,
    jwt: (sub, claims) => issuer.issueLoginPair(sub, claims).accessToken,
    session: async (sub) => (await sessions.upgrade(issuer.issueLoginPair(sub).accessToken)).accessToken,
    async close() {
      registry.dispose();
      await sessions.close();
      await stores.close();
    },
  };
}
