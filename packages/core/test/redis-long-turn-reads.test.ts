/**
 * When the near cache's reads leave for Redis on a server whose loop turns last long.
 * node-redis sends what it is asked for when the loop turn ends (from `setImmediate`), so a
 * read asked for from a timer or from `setImmediate` leaves only when the next turn ends:
 * on a saturated server, turns of seconds later, its answer older than the near cache keeps
 * one. The session checks' gathered misses and their renewals ahead of expiry both go from
 * the turn that asks for them once they have waited their gathering time. On a redis-server
 * of this file's own; a raw socket writes a marker while the next turn runs, and the read
 * tells by the value it finds whether it left before that turn.
 */
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BackgroundRenewals } from '../src/session/background-renewals.js';
import { GatheredReads } from '../src/session/gathered-reads.js';
import { longPollPhases } from '../../../test/support/event-loop.js';
import { findRedisServerBinary } from '../../../test/support/redis-server.js';
import { ownRedis } from './support/own-redis.js';

const binary = findRedisServerBinary();

describe.runIf(binary !== undefined)(binary ? 'near-cache reads asked for in a long loop turn' : 'near-cache reads asked for in a long loop turn — SKIPPED, redis-server not found', () => {
  const own = ownRedis(binary);
  let raw: Socket;

  beforeAll(async () => {
    const { hostname, port } = new URL(own.server.url);
    raw = connect(Number(port), hostname);
    raw.on('data', () => undefined);
    await new Promise<void>((resolve) => raw.once('connect', resolve));
  });
  afterAll(() => {
    raw.destroy();
  });

  /** Sets `key` to "next turn" now, in this turn, past node-redis's queue (a write on the socket leaves at once). */
  function markNextTurn(key: string): void {
    raw.write(`*3\r\n$3\r\nSET\r\n$${key.length}\r\n${key}\r\n$9\r\nnext turn\r\n`);
  }

  /**
   * Two turns of 12 reads of 5 ms: `ask(0)` runs in the first turn's first read and `ask(1)`
   * 30 ms later in the same turn; the key is marked 30 ms into the next turn. Answers what
   * the first ask's read found: "this turn" when it left as the turn that asked ended.
   */
  async function foundByReadAskedIn(key: string, ask: (nth: number) => Promise<unknown>): Promise<unknown> {
    await own.redis.set(key, 'this turn');
    let first: Promise<unknown> | undefined;
    let second: Promise<unknown> | undefined;
    await longPollPhases(2, 12, 5, (turn, read) => {
      if (turn === 0 && read === 0) first = ask(0);
      if (turn === 0 && read === 6) second = ask(1);
      if (turn === 1 && read === 6) markNextTurn(key);
    });
    await second;
    return first;
  }

  it('a session miss leaves as the turn that asked for it ends, not the next one', async () => {
    const gathered = new GatheredReads((keys: readonly string[]) => own.redis.mGet([...keys]), 64);
    expect(await foundByReadAskedIn('miss', (nth) => gathered.read(nth === 0 ? 'miss' : 'other miss'))).toBe('this turn');
  });

  it('a renewal ahead of expiry leaves as the turn that asked for it ends, not the next one', async () => {
    let found: Promise<unknown> | undefined;
    const renewals = new BackgroundRenewals((keys) => {
      const reading = own.redis.mGet(keys);
      found ??= reading.then((values) => values[0]);
      return reading.then(() => undefined);
    });
    await foundByReadAskedIn('renewal', async (nth) => renewals.offer(nth === 0 ? 'renewal' : 'other renewal'));
    expect(await found).toBe('this turn');
  });
});
