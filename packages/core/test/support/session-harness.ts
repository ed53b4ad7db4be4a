/**
 * Builds a TokenSessionSync wired to one provider for the contract suites: a test
 * configuration, the real issuer and validator, stores on memory or on the test Redis
 * (under a key prefix of its own, so parallel files never share keys).
 */
import { randomUUID } from 'node:crypto';
import {
  createSessionStores,
  JwtTokenIssuer,
  JwtTokenValidator,
  loadConfig,
  LockoutStore,
  resolveSigningKey,
  silentLoggerFactory,
  TokenSessionSync,
  type PortcullisConfig,
  type SessionStoreOptions,
  type SessionStores,
  type SigningKey,
} from '@portcullis/core';

export type ProviderName = 'inmemory' | 'redis';

/** 32 bytes of key, base64: good enough for tests, never for production. */
export const TEST_KEY = Buffer.alloc(32, 7).toString('base64');

export interface SessionHarness {
  readonly config: PortcullisConfig;
  readonly key: SigningKey;
  readonly issuer: JwtTokenIssuer;
  readonly validator: JwtTokenValidator;
  readonly stores: SessionStores;
  readonly sessions: TokenSessionSync;
  readonly lockout: LockoutStore;
  /** Another server of the same fleet: its own stores and connections, same keys. */
  twin(): Promise<SessionHarness>;
  close(): Promise<void>;
}

export interface HarnessOptions {
  readonly provider: ProviderName;
  readonly redisUrl?: string | null;
  readonly security?: Record<string, unknown>;
  readonly stores?: SessionStoreOptions;
}

export function testConfig(provider: ProviderName, redisUrl: string | null | undefined, security: Record<string, unknown> = {}): PortcullisConfig {
  const lockoutStore = provider === 'redis' ? 'backplane' : 'memory';
  return loadConfig({
    env: {},
    tree: {
      svc: {
        security: { mode: 'jwt', key: TEST_KEY, lockout: { store: lockoutStore }, ...security },
        persistence: { cache: { provider, url: redisUrl ?? 'redis://127.0.0.1:1' } },
      },
    },
  });
}

export async function createHarness(options: HarnessOptions, keyPrefix = `test-${randomUUID()}`): Promise<SessionHarness> {
  const config = testConfig(options.provider, options.redisUrl, options.security);
  const key = resolveSigningKey(config, silentLoggerFactory.create('test'));
  const issuer = new JwtTokenIssuer(config, key);
  const validator = new JwtTokenValidator(config, key);
  const stores = createSessionStores(config, { keyPrefix, ...options.stores });
  await stores.ready();
  const sessions = new TokenSessionSync(config, validator, issuer, stores, silentLoggerFactory);
  const lockout = new LockoutStore(config, stores);
  const twins: SessionHarness[] = [];
  return {
    config,
    key,
    issuer,
    validator,
    stores,
    sessions,
    lockout,
    async twin() {
      const twin = await createHarness(options, keyPrefix);
      twins.push(twin);
      return twin;
    },
    async close() {
      await Promise.all(twins.map((t) => t.close()));
      await sessions.close();
      await stores.close();
    },
  };
}

/** Access-token claims of a JWT the harness issued. */
export function claimsOf(harness: SessionHarness, token: string, type: 'access' | 'refresh' = 'access') {
  const result = harness.validator.validate(token, type);
  if (!result.ok) throw new Error(`test token invalid: ${result.reason}`);
  return result.claims;
}
