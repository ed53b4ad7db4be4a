/**
 * A Lua script run by its SHA-1 (`EVALSHA`): one round trip, and Redis runs it as one step,
 * so no other command interleaves. A server that does not know the script yet (first use,
 * a restart, a failover to a replica, `SCRIPT FLUSH`) answers `NOSCRIPT`; the script is then
 * sent in full once (`EVAL`, which also caches it on that server) and later calls go by SHA
 * again. On a cluster the client routes the call by its first key, so every key of one call
 * must share a slot.
 */
import { createHash } from 'node:crypto';
import type { RedisClient } from './redis-connection.js';

/**
 * One Lua script and how to call it.
 *
 * @example
 * ```ts
 * const incr = new RedisScript("return redis.call('INCRBY', KEYS[1], ARGV[1])");
 * const count = await incr.run(client, ['counter'], ['1']);
 * ```
 */
export class RedisScript {
  /** The SHA-1 Redis caches the script under. */
  readonly sha: string;

  constructor(
    readonly source: string,
    sha?: string,
  ) {
    this.sha = sha ?? createHash('sha1').update(source).digest('hex');
  }

  /** Runs the script on `keys` (all in one slot on a cluster) with `args`; answers its reply. */
  async run(client: RedisClient, keys: string[], args: string[]): Promise<unknown> {
    const options = { keys, arguments: args };
    try {
      return await client.evalSha(this.sha, options);
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      return client.eval(this.source, options);
    }
  }
}
