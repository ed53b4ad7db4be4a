/**
 * The test stacks of `@portcullis/core/testing` as the contract suites use them:
 * one provider, the real issuer and validator, and stores under a key prefix of
 * their own (so parallel files never share keys).
 */
import { randomUUID } from 'node:crypto';
import {
  JwtTokenIssuer,
  JwtTokenValidator,
  LockoutStore,
  SIGNING_KEY,
  TokenSessionSync,
  type PortcullisConfig,
  type SessionStores,
  type SigningKey,
} from '@portcullis/core';
import { createMemoryTestStack, createRedisTestStack, type TestStackOptions } from '@portcullis/core/testing';

export type ProviderName = 'inmemory' | 'redis';

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
  /** `SVC__…` settings laid over the stack's configuration (the Redis topology, for one). */
  readonly env?: Readonly<Record<string, string>>;
  readonly security?: Record<string, unknown>;
  readonly stores?: TestStackOptions['stores'];
}

export async function createHarness(options: HarnessOptions, keyPrefix = `test-${randomUUID()}`): Promise<SessionHarness> {
  const stackOptions: TestStackOptions = { keyPrefix, security: options.security, stores: options.stores, env: options.env };
  const stack = options.provider === 'redis'
    ? await createRedisTestStack(options.redisUrl ?? 'redis://127.0.0.1:1', stackOptions)
    : await createMemoryTestStack(stackOptions);
  const twins: SessionHarness[] = [];
  return {
    config: stack.config,
    key: stack.container.resolve(SIGNING_KEY),
    issuer: stack.issuer,
    validator: stack.container.resolve(JwtTokenValidator),
    stores: stack.stores,
    sessions: stack.sessions,
    lockout: stack.container.resolve(LockoutStore),
    async twin() {
      const twin = await createHarness(options, keyPrefix);
      twins.push(twin);
      return twin;
    },
    async close() {
      await Promise.all(twins.map((t) => t.close()));
      await stack.close();
    },
  };
}

/** Access-token claims of a JWT the harness issued. */
export function claimsOf(harness: SessionHarness, token: string, type: 'access' | 'refresh' = 'access') {
  const result = harness.validator.validate(token, type);
  if (!result.ok) throw new Error(`test token invalid: ${result.reason}`);
  return result.claims;
}

export { redisTopologies, type RedisUnderTest } from '../../../../test/support/redis-topologies.js';
