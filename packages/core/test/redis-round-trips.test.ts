/**
 * What each store operation costs on the wire, counted on a real redis-server of this file's
 * own with MONITOR: every request a client sends shows up once, and the commands a script runs
 * inside Redis show up marked `lua`, so they are not requests. A `@RateLimit` claim or a lockout
 * count is one request, and keeps its window semantics.
 */
import { createClient } from '@keyv/redis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { silentLoggerFactory } from '@portcullis/core';
import { RedisCacheStore } from '../src/store/redis-cache-store.js';
import { findRedisServerBinary, startRedisServer, type RedisServer } from '../../../test/support/redis-server.js';

const redisUrl = inject('redisUrl');
const binary = findRedisServerBinary();

/** Watches every request to a Redis; `requestsDuring` answers those `action` sent. */
async function watch(url: string): Promise<{ requestsDuring(action: () => Promise<unknown>): Promise<string[]>; close(): Promise<void> }> {
  const monitor = createClient({ url });
  const probe = createClient({ url });
  await Promise.all([monitor.connect(), probe.connect()]);
  let lines: string[] = [];
  await monitor.monitor((line: string) => void lines.push(line));
  let marks = 0;
  const drain = async (): Promise<void> => {
    const mark = `mark-${++marks}`;
    await probe.echo(mark);
    for (let i = 0; i < 200 && !lines.some((l) => l.includes(mark)); i++) await new Promise((r) => setTimeout(r, 5));
  };
  return {
    async requestsDuring(action) {
      await drain();
      lines = [];
      await action();
      await drain();
      return lines.filter((l) => !l.includes(' lua]') && !/"echo" "mark-/i.test(l)).map((l) => l.replace(/^[\d.]+ \[[^\]]*\] /, '').toLowerCase());
    },
    async close() {
      await Promise.all([monitor.close(), probe.close()]);
    },
  };
}

describe.runIf(redisUrl !== null && binary !== undefined)('Redis requests per store operation', () => {
  let redis: RedisServer;
  let cache: RedisCacheStore;
  let wire: Awaited<ReturnType<typeof watch>>;
  beforeAll(async () => {
    redis = await startRedisServer(binary);
    cache = new RedisCacheStore({ url: redis.url, keyPrefix: 'trips' }, silentLoggerFactory.create('test'));
    await cache.ready();
    wire = await watch(redis.url);
  });
  afterAll(async () => {
    await wire?.close();
    await cache?.close();
    await redis?.stop();
  });

  it('counts a rate-limit claim or a failed login with one request, which starts the window only for a new counter', async () => {
    await cache.increment('rate-limit', 'warm-up', 60_000); // the first call may have to send the script in full
    const first = await wire.requestsDuring(() => cache.increment('rate-limit', 'caller-1', 60_000));
    expect(first).toHaveLength(1);
    expect(first[0]).toMatch(/^"evalsha"/);
    expect((await cache.counter('rate-limit', 'caller-1')).count).toBe(1);
    const started = await cache.remainingMs('rate-limit', 'caller-1');
    expect(started).toBeGreaterThan(59_000);
    expect(started).toBeLessThanOrEqual(60_000);

    await new Promise((r) => setTimeout(r, 50));
    const again = await wire.requestsDuring(() => cache.increment('rate-limit', 'caller-1', 60_000, 4));
    expect(again).toHaveLength(1);
    expect((await cache.counter('rate-limit', 'caller-1')).count).toBe(5);
    // An existing counter keeps its window: the second claim did not restart it.
    expect(await cache.remainingMs('rate-limit', 'caller-1')).toBeLessThan(started);
    expect(await cache.increment('rate-limit', 'caller-1', 60_000, -5)).toBe(0);
    expect(await cache.remainingMs('rate-limit', 'caller-1')).toBeGreaterThan(0);
  });

  it('sends the script in full once when Redis has forgotten it, and counts correctly', async () => {
    const admin = createClient({ url: redis.url });
    await admin.connect();
    try {
      await admin.scriptFlush();
    } finally {
      await admin.close();
    }
    const requests = await wire.requestsDuring(() => cache.increment('rate-limit', 'after-flush', 1_000));
    expect(requests.map((r) => r.split(' ')[0])).toEqual(['"evalsha"', '"eval"']);
    expect(await cache.increment('rate-limit', 'after-flush', 1_000)).toBe(2);
    expect(await cache.remainingMs('rate-limit', 'after-flush')).toBeLessThanOrEqual(1_000);
  });

  it('lets a counter expire at the end of its window', async () => {
    expect(await cache.increment('lockout-failures', 'short', 100)).toBe(1);
    await new Promise((r) => setTimeout(r, 150));
    expect(await cache.counter('lockout-failures', 'short')).toEqual({ count: 0, remainingMs: 0 });
    expect(await cache.increment('lockout-failures', 'short', 100)).toBe(1);
  });
});
