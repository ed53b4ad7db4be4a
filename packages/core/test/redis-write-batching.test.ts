/**
 * A Redis operation's timeout against how node-redis sends commands: at the end of the loop
 * turn that asked for them, and all of them then. On a redis-server of this file's own, so other
 * test files' traffic on the shared one cannot delay its replies.
 */
import { describe, expect, it } from 'vitest';
import { guarded } from '../src/store/redis-connection.js';
import { busyTurns, stall } from '../../../test/support/event-loop.js';
import { findRedisServerBinary } from '../../../test/support/redis-server.js';
import { ownRedis } from './support/own-redis.js';

const binary = findRedisServerBinary();

describe.runIf(binary !== undefined)(binary ? 'Redis commands asked for in one long loop turn' : 'Redis commands asked for in one long loop turn — SKIPPED, redis-server not found', () => {
  const own = ownRedis(binary);

  it('all leave when the turn ends, so none waits unsent into its timeout', async () => {
    // 400 commands of about 300 bytes, far more than the 16 KiB a socket buffers by default,
    // asked for in a turn that runs 245 ms, while every later turn runs 400 ms, longer than the
    // 250 ms timeout (a saturated server). Redis answers each at once once it has it.
    const value = 'v'.repeat(250);
    const answers = Array.from({ length: 400 }, (_, i) => guarded(own.redis, 250, () => own.redis.set(`turn-${i}`, value)));
    stall(245);
    const idle = busyTurns(400);
    const outcomes = await Promise.allSettled(answers);
    idle();
    const failures = outcomes.flatMap((o) => (o.status === 'rejected' ? [String((o.reason as Error).cause ?? o.reason)] : []));
    expect(failures.length, `first: ${failures[0]}`).toBe(0);
  });
});
