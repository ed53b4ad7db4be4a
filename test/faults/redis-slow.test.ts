/**
 * A Redis that stops answering (frozen with SIGSTOP, its connections left open, as when it
 * is stuck on a slow command) must not gather an unbounded queue in which every request
 * waits out its own timeout: past the bound, a session check fails with `unavailable` at
 * once, and service comes back by itself as soon as Redis answers again.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { busyTurns } from '../support/event-loop.js';
import { findRedisServerBinary, startRedisServer, type RedisServer } from '../support/redis-server.js';
import { createRedisTestStack, type TestStack, type TestStackOptions } from '@portcullis/core/testing';
import type { LoggerFactory } from '@portcullis/core';

const hasRedis = findRedisServerBinary() !== undefined;
const label = (name: string) => (hasRedis ? name : `${name} — SKIPPED, redis-server not found`);
const QUEUE = 32;
const CHECKS = 200;

function recordingLoggers() {
  const lines: Array<{ level: string; message: string; fields?: Record<string, unknown> }> = [];
  const loggers: LoggerFactory = {
    create: () => {
      const at = (level: string) => (message: string, fields?: Record<string, unknown>) => void lines.push({ level, message, fields });
      return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
    },
  };
  return { loggers, lines };
}

/**
 * A redis-server of its own and a test stack on it with these store settings, for the
 * describe block that calls it; the stack's log lines are recorded.
 */
function redisStack(stores: TestStackOptions['stores']) {
  const fixture = { ...recordingLoggers(), redis: undefined as unknown as RedisServer, stack: undefined as unknown as TestStack };
  beforeAll(async () => {
    fixture.redis = await startRedisServer();
    fixture.stack = await createRedisTestStack(fixture.redis.url, { loggers: fixture.loggers, stores });
  });
  afterAll(async () => {
    fixture.redis?.thaw();
    await fixture.stack?.close();
    await fixture.redis?.stop();
  });
  return fixture;
}

describe.skipIf(!hasRedis)(label('a Redis that stops answering'), () => {
  const fixture = redisStack({ maxPendingOperations: QUEUE, operationTimeoutMs: 30_000 });
  const { lines } = fixture;

  it('refuses operations beyond its bound with unavailable before sending them, answers the queued ones when it is back, and serves again', async () => {
    const live = await fixture.stack.session('olga');
    expect(await fixture.stack.sessions.validate(live)).toMatchObject({ id: 'olga' });

    fixture.redis.freeze();
    const outcomes: string[] = [];
    const tally = (operation: Promise<unknown>) =>
      operation.then(
        () => outcomes.push('answered'),
        (error: { code?: string }) => outcomes.push(error.code ?? 'other'),
      );
    // Session checks (one GET each) and counter increments (a MULTI … EXEC transaction each), interleaved.
    const checks = Array.from({ length: CHECKS }, (_, i) =>
      tally(i % 2 === 0 ? fixture.stack.sessions.validate(`${randomUUID()};session`) : fixture.stack.stores.cache.increment('lockout-failures', `k${i}`, 60_000)),
    );
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
    // Nothing can have been answered, and no timeout (30 s) can have passed: these refusals are the bound's.
    expect(outcomes.filter((o) => o === 'unavailable').length).toBeGreaterThanOrEqual(CHECKS - QUEUE);
    expect(outcomes).not.toContain('answered');
    // The operator hears why, once (not once per refusal), and nothing of the keys asked for.
    const refusedLines = lines.filter((l) => l.level === 'warn' && /refused with unavailable/.test(l.message));
    expect(refusedLines).toEqual([{ level: 'warn', message: expect.stringContaining('maxPendingOperations'), fields: { maxPendingOperations: QUEUE, times: 1 } }]);

    fixture.redis.thaw();
    await Promise.all(checks);
    expect(outcomes.filter((o) => o === 'answered').length).toBeGreaterThan(0);
    expect(await fixture.stack.sessions.validate(live)).toMatchObject({ id: 'olga' });
    // No transaction was left half queued: new writes and reads on the connection work.
    const fresh = await fixture.stack.session('pavel');
    expect(await fixture.stack.sessions.validate(fresh)).toMatchObject({ id: 'pavel' });
    expect(await fixture.stack.stores.cache.increment('lockout-failures', 'after', 60_000)).toBe(1);
  });
});

describe.skipIf(!hasRedis)(label('a Redis that answers nothing within the operation timeout'), () => {
  const fixture = redisStack({ operationTimeoutMs: 300 });
  const { lines } = fixture;

  it('fails each operation with unavailable after the timeout and tells the operator once, counting the rest', async () => {
    fixture.redis.freeze();
    const started = performance.now();
    const outcomes = await Promise.allSettled([1, 2, 3].map((i) => fixture.stack.stores.cache.increment('lockout-failures', `t${i}`, 60_000)));
    const waited = performance.now() - started;
    expect(waited).toBeGreaterThanOrEqual(290);
    expect(waited).toBeLessThan(1_400); // one timeout: a frozen Redis sends no reply to wait behind
    expect(outcomes.map((o) => (o.status === 'rejected' ? (o.reason as { code?: string }).code : 'answered'))).toEqual(['unavailable', 'unavailable', 'unavailable']);
    const timedOut = lines.filter((l) => l.level === 'warn' && /no reply within/.test(l.message));
    expect(timedOut).toEqual([{ level: 'warn', message: expect.stringContaining('operationTimeoutMs'), fields: { operationTimeoutMs: 300, times: 1 } }]);
    fixture.redis.thaw();
    expect(await fixture.stack.stores.cache.increment('lockout-failures', 'after', 60_000)).toBe(1);
  });
});

describe.skipIf(!hasRedis)(label('a server that falls behind reading the replies of a Redis that answers at once'), () => {
  const READS = 2_000;
  const fixture = redisStack({ operationTimeoutMs: 1000, maxPendingOperations: READS });
  const { lines } = fixture;

  it('answers every operation whose reply is waiting behind replies this process has not read yet, and warns of no timeout', async () => {
    const value = 'v'.repeat(12_000); // 2,000 replies of 12 kB: more than a loop turn reads of one socket
    for (let i = 0; i < READS; i += 200) {
      await Promise.all(Array.from({ length: 200 }, (_, j) => fixture.stack.stores.cache.set('session', `big-${i + j}`, value, 60_000)));
    }
    // Every loop turn of this server is 200 ms of other work (a game server under load), for
    // as long as the reads are out; Redis itself answers all of them within milliseconds.
    let caughtUp: (() => void) | undefined;
    const outcomes = await Promise.allSettled(
      Array.from({ length: READS }, (_, i) => {
        const read = fixture.stack.stores.cache.get<string>('session', `big-${i}`);
        if (i === 0) caughtUp = busyTurns(200);
        return read;
      }),
    ).finally(() => caughtUp?.());
    expect(outcomes.filter((o) => o.status === 'rejected').length).toBe(0);
    expect(outcomes.every((o) => o.status === 'fulfilled' && o.value === value)).toBe(true);
    expect(lines.filter((l) => /no reply within/.test(l.message))).toEqual([]);
    // About 3 s alone; far longer when the run's other files take the cores (its turns are wall-clock 200 ms each).
  }, 60_000);
});
