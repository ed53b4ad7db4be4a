/**
 * The in-memory test stack of `@portcullis/core/testing` for the shield and
 * real-time tests, with a random key of its own and every log line kept.
 */
import { randomBytes } from 'node:crypto';
import type { AuthContext, Transport } from '../../src/contracts/auth-context.js';
import type { Logger, LoggerFactory } from '../../src/contracts/logger.js';
import { createMemoryTestStack, createRedisTestStack, type TestStack } from '../../src/testing.js';

/** Every line logged, to assert that nothing secret was written. */
export interface LogLine {
  readonly category: string;
  readonly level: string;
  readonly message: string;
  readonly fields: Record<string, unknown> | undefined;
}

export interface ShieldFixture extends TestStack {
  readonly logs: LogLine[];
}

/** A Redis URL where nothing listens: a store outage, for real. */
export const UNREACHABLE_REDIS = 'redis://127.0.0.1:1';

/**
 * Builds the stack, in memory or on `redisUrl`; call `close()` in `afterEach`. With
 * `waitForStore: false` it does not wait for the store, so a fixture on
 * {@link UNREACHABLE_REDIS} can be built.
 */
export async function createShieldFixture(redisUrl?: string, { waitForStore = true } = {}): Promise<ShieldFixture> {
  const logs: LogLine[] = [];
  const loggers: LoggerFactory = {
    create(category: string): Logger {
      const at = (level: string) => (message: string, fields?: Record<string, unknown>) => void logs.push({ category, level, message, fields });
      return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
    },
  };
  const options = { key: randomBytes(32).toString('base64'), loggers, waitForStore };
  const stack = await (redisUrl ? createRedisTestStack(redisUrl, options) : createMemoryTestStack(options));
  return Object.assign(stack, { logs });
}

/** The context of a request from client `c1` at 127.0.0.1 on `transport`, presenting `credential` (with the connection's `memo`, if any). */
export function authContext(transport: Transport, credential: string | undefined, memo?: Map<unknown, unknown>): AuthContext {
  return { transport, credential, clientId: 'c1', remoteAddress: '127.0.0.1', memo };
}
