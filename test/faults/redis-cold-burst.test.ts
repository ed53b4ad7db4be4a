/**
 * A server that fell behind (its near cache expired while it shed load, or it just
 * restarted) meets thousands of sessions it has not checked lately in one event-loop turn.
 * Checking each with a Redis read of its own filled the store's queue bound (2,048 operations
 * by default) and answered the rest `unavailable` while Redis itself was idle: the spiral of
 * the 5,000-player load test. Session checks that miss in one turn share store reads instead,
 * and so do the checks of JWTs (`@JwtShield` on Redis reads the store for every request).
 */
import { createClient } from '@keyv/redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findRedisServerBinary, startRedisServer, type RedisServer } from '../support/redis-server.js';
import { createRedisTestStack, type TestStack } from '@portcullis/core/testing';
import { JwtTokenValidator } from '@portcullis/core';

const hasRedis = findRedisServerBinary() !== undefined;
const label = (name: string) => (hasRedis ? name : `${name} — SKIPPED, redis-server not found`);
/** More sessions than the store's default queue bound. */
const SESSIONS = 3000;

/** Requests Redis has served, by command, from INFO commandstats. */
async function commandCalls(url: string): Promise<Record<string, number>> {
  const client = createClient({ url });
  await client.connect();
  try {
    const info = await client.info('commandstats');
    const calls: Record<string, number> = {};
    for (const match of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) calls[match[1]!] = Number(match[2]);
    return calls;
  } finally {
    await client.close();
  }
}

describe.skipIf(!hasRedis)(label('thousands of session checks missing the near cache at once, on Redis'), () => {
  let redis: RedisServer;
  let serverA: TestStack;
  let serverB: TestStack;
  let tokens: string[];

  beforeAll(async () => {
    redis = await startRedisServer();
    serverA = await createRedisTestStack(redis.url);
    // Server B starts with an empty near cache, on the default store bounds.
    serverB = await createRedisTestStack(redis.url, { keyPrefix: serverA.keyPrefix });
    tokens = [];
    for (let i = 0; i < SESSIONS; i += 100) {
      tokens.push(...(await Promise.all(Array.from({ length: 100 }, (_, j) => serverA.session(`player-${i + j}`)))));
    }
  }, 60_000);
  afterAll(async () => {
    await serverB?.close();
    await serverA?.close();
    await redis?.stop();
  });

  it('answers every one from a few store reads, none unavailable, and the next message from the near cache', async () => {
    const before = await commandCalls(redis.url);
    const outcomes = await Promise.allSettled(tokens.map((token) => serverB.sessions.validate(token)));
    const after = await commandCalls(redis.url);

    const refused = outcomes.filter((o) => o.status === 'rejected');
    expect(refused.map((o) => (o as PromiseRejectedResult).reason?.code)).toEqual([]);
    expect(outcomes.map((o, i) => (o as PromiseFulfilledResult<{ id: string } | undefined>).value?.id === `player-${i}`).every(Boolean)).toBe(true);
    const reads = (after.get ?? 0) - (before.get ?? 0) + (after.mget ?? 0) - (before.mget ?? 0);
    expect(reads).toBeGreaterThan(0);
    expect(reads).toBeLessThanOrEqual(Math.ceil(SESSIONS / 64) + 2);
    expect(tokens.every((token) => serverB.sessions.peek(token) !== undefined)).toBe(true);
  });

  it('still answers a revoked session undefined in such a burst', async () => {
    const revoked = tokens.slice(0, 50);
    await Promise.all(revoked.map((token) => serverA.sessions.revoke(token)));
    const fresh = await createRedisTestStack(redis.url, { keyPrefix: serverA.keyPrefix });
    try {
      const answers = await Promise.all(tokens.map((token) => fresh.sessions.validate(token)));
      expect(answers.slice(0, 50)).toEqual(Array(50).fill(undefined));
      expect(answers.slice(50).every((p, i) => p?.id === `player-${i + 50}`)).toBe(true);
    } finally {
      await fresh.close();
    }
  });
});

describe.skipIf(!hasRedis)(label('thousands of JWT checks at once, on Redis'), () => {
  let redis: RedisServer;
  let server: TestStack;

  beforeAll(async () => {
    redis = await startRedisServer();
    server = await createRedisTestStack(redis.url);
  });
  afterAll(async () => {
    await server?.close();
    await redis?.stop();
  });

  it('answers every one from a few store reads, none unavailable, and still finds the spent and the revoked ones', async () => {
    const validator = server.container.resolve(JwtTokenValidator);
    const claimsOf = (jwt: string) => {
      const result = validator.validate(jwt);
      if (!result.ok) throw new Error(`test JWT refused: ${result.reason}`);
      return result.claims;
    };
    const jwts = Array.from({ length: SESSIONS }, (_, i) => server.jwt(`player-${i}`));
    // The first ten are spent on an upgrade, the next ten belong to a principal whose JWTs were all revoked.
    await Promise.all(jwts.slice(0, 10).map((jwt) => server.sessions.upgrade(jwt)));
    await server.sessions.revokeAllFor('player-10');
    const claims = jwts.map(claimsOf);

    const before = await commandCalls(redis.url);
    const outcomes = await Promise.allSettled(claims.map((c) => server.sessions.isJwtInvalidated(c)));
    const after = await commandCalls(redis.url);

    expect(outcomes.filter((o) => o.status === 'rejected').map((o) => (o as PromiseRejectedResult).reason?.code)).toEqual([]);
    const answers = outcomes.map((o) => (o as PromiseFulfilledResult<boolean>).value);
    expect(answers.slice(0, 11)).toEqual(Array(11).fill(true));
    expect(answers.slice(11).every((invalidated) => invalidated === false)).toBe(true);
    const reads = (after.get ?? 0) - (before.get ?? 0) + (after.mget ?? 0) - (before.mget ?? 0);
    expect(reads).toBeGreaterThan(0);
    expect(reads).toBeLessThanOrEqual(Math.ceil(SESSIONS / 64) + 2);
  });
});
