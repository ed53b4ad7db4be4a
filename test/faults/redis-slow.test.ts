/**
 * A Redis that stops answering (frozen with SIGSTOP, its connections left open, as when it
 * is stuck on a slow command) must not gather an unbounded queue in which every request
 * waits out its own timeout: past the bound, a session check fails with `unavailable` at
 * once, and service comes back by itself as soon as Redis answers again.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findRedisServerBinary, startRedisServer, type RedisServer } from '../support/redis-server.js';
import { createRedisTestStack, type TestStack } from '@portcullis/core/testing';
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

describe.skipIf(!hasRedis)(label('a Redis that stops answering'), () => {
  let redis: RedisServer;
  let stack: TestStack;
  const { loggers, lines } = recordingLoggers();

  beforeAll(async () => {
    redis = await startRedisServer();
    stack = await createRedisTestStack(redis.url, { loggers, stores: { maxPendingOperations: QUEUE, operationTimeoutMs: 30_000 } });
  });
  afterAll(async () => {
    redis?.thaw();
    await stack?.close();
    await redis?.stop();
  });

  it('refuses operations beyond its bound with unavailable before sending them, answers the queued ones when it is back, and serves again', async () => {
    const live = await stack.session('olga');
    expect(await stack.sessions.validate(live)).toMatchObject({ id: 'olga' });

    redis.freeze();
    const outcomes: string[] = [];
    const tally = (operation: Promise<unknown>) =>
      operation.then(
        () => outcomes.push('answered'),
        (error: { code?: string }) => outcomes.push(error.code ?? 'other'),
      );
    // Session checks (one GET each) and counter increments (a MULTI … EXEC transaction each), interleaved.
    const checks = Array.from({ length: CHECKS }, (_, i) =>
      tally(i % 2 === 0 ? stack.sessions.validate(`${randomUUID()};session`) : stack.stores.cache.increment('lockout-failures', `k${i}`, 60_000)),
    );
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
    // Nothing can have been answered, and no timeout (30 s) can have passed: these refusals are the bound's.
    expect(outcomes.filter((o) => o === 'unavailable').length).toBeGreaterThanOrEqual(CHECKS - QUEUE);
    expect(outcomes).not.toContain('answered');
    // The operator hears why, once (not once per refusal), and nothing of the keys asked for.
    const refusedLines = lines.filter((l) => l.level === 'warn' && /refused with unavailable/.test(l.message));
    expect(refusedLines).toEqual([{ level: 'warn', message: expect.stringContaining('maxPendingOperations'), fields: { maxPendingOperations: QUEUE, times: 1 } }]);

    redis.thaw();
    await Promise.all(checks);
    expect(outcomes.filter((o) => o === 'answered').length).toBeGreaterThan(0);
    expect(await stack.sessions.validate(live)).toMatchObject({ id: 'olga' });
    // No transaction was left half queued: new writes and reads on the connection work.
    const fresh = await stack.session('pavel');
    expect(await stack.sessions.validate(fresh)).toMatchObject({ id: 'pavel' });
    expect(await stack.stores.cache.increment('lockout-failures', 'after', 60_000)).toBe(1);
  });
});

describe.skipIf(!hasRedis)(label('a Redis that answers nothing within the operation timeout'), () => {
  let redis: RedisServer;
  let stack: TestStack;
  const { loggers, lines } = recordingLoggers();

  beforeAll(async () => {
    redis = await startRedisServer();
    stack = await createRedisTestStack(redis.url, { loggers, stores: { operationTimeoutMs: 300 } });
  });
  afterAll(async () => {
    redis?.thaw();
    await stack?.close();
    await redis?.stop();
  });

  it('fails each operation with unavailable after the timeout and tells the operator once, counting the rest', async () => {
    redis.freeze();
    const started = performance.now();
    const outcomes = await Promise.allSettled([1, 2, 3].map((i) => stack.stores.cache.increment('lockout-failures', `t${i}`, 60_000)));
    const waited = performance.now() - started;
    expect(waited).toBeGreaterThanOrEqual(290);
    expect(waited).toBeLessThan(1_400); // one timeout, not the five a server that is behind may wait
    expect(outcomes.map((o) => (o.status === 'rejected' ? (o.reason as { code?: string }).code : 'answered'))).toEqual(['unavailable', 'unavailable', 'unavailable']);
    const timedOut = lines.filter((l) => l.level === 'warn' && /no reply within/.test(l.message));
    expect(timedOut).toEqual([{ level: 'warn', message: expect.stringContaining('operationTimeoutMs'), fields: { operationTimeoutMs: 300, times: 1 } }]);
    redis.thaw();
    expect(await stack.stores.cache.increment('lockout-failures', 'after', 60_000)).toBe(1);
  });
});

describe.skipIf(!hasRedis)(label('a server that falls behind reading the replies of a Redis that answers at once'), () => {
  let redis: RedisServer;
  let stack: TestStack;
  const { loggers, lines } = recordingLoggers();
  const READS = 2_000;

  beforeAll(async () => {
    redis = await startRedisServer();
    stack = await createRedisTestStack(redis.url, { loggers, stores: { operationTimeoutMs: 1000, maxPendingOperations: READS } });
  });
  afterAll(async () => {
    await stack?.close();
    await redis?.stop();
  });

  it('answers every operation whose reply is waiting behind replies this process has not read yet, and warns of no timeout', async () => {
    const value = 'v'.repeat(12_000); // 2,000 replies of 12 kB: more than a loop turn reads of one socket
    for (let i = 0; i < READS; i += 200) {
      await Promise.all(Array.from({ length: 200 }, (_, j) => stack.stores.cache.set('session', `big-${i + j}`, value, 60_000)));
    }
    // Every loop turn of this server is 200 ms of other work (a game server under load), for
    // as long as the reads are out; Redis itself answers all of them within milliseconds.
    let behind = true;
    const busyTurn = () => {
      if (!behind) return;
      const until = performance.now() + 200;
      while (performance.now() < until) {
        // busy on purpose
      }
      setImmediate(busyTurn);
    };
    const outcomes = await Promise.allSettled(
      Array.from({ length: READS }, (_, i) => {
        const read = stack.stores.cache.get<string>('session', `big-${i}`);
        if (i === 0) setImmediate(busyTurn);
        return read;
      }),
    ).finally(() => {
      behind = false;
    });
    expect(outcomes.filter((o) => o.status === 'rejected').length).toBe(0);
    expect(outcomes.every((o) => o.status === 'fulfilled' && o.value === value)).toBe(true);
    expect(lines.filter((l) => /no reply within/.test(l.message))).toEqual([]);
  });
});
