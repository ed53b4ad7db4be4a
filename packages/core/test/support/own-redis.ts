/**
 * A redis-server of one test file's own, with a command client ready on it, so other test
 * files' traffic on the shared one cannot delay its replies. Call it inside the `describe`
 * that uses it: it registers the `beforeAll` that starts both and the `afterAll` that stops them.
 */
import { afterAll, beforeAll } from 'vitest';
import { silentLoggerFactory } from '../../src/logging/logger.js';
import { closeRedisClient, openRedisClient, waitUntilReady, type RedisClient } from '../../src/store/redis-connection.js';
import { startRedisServer, type RedisServer } from '../../../../test/support/redis-server.js';

/**
 * @example
 * ```ts
 * describe.runIf(binary !== undefined)('…', () => {
 *   const own = ownRedis(binary);
 *   it('…', async () => { await own.redis.set('k', 'v'); });
 * });
 * ```
 */
export function ownRedis(binary: string | undefined): { readonly server: RedisServer; readonly redis: RedisClient } {
  let server: RedisServer | undefined;
  let redis: RedisClient | undefined;
  beforeAll(async () => {
    server = await startRedisServer(binary);
    redis = openRedisClient(server.url, silentLoggerFactory.create('test'), 'commands');
    await waitUntilReady(redis, 5_000);
  });
  afterAll(async () => {
    if (redis) await closeRedisClient(redis);
    await server?.stop();
  });
  return {
    get server() {
      return server!;
    },
    get redis() {
      return redis!;
    },
  };
}
