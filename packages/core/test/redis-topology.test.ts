/**
 * What the cluster and sentinel topologies add beyond the contract suites (which run on all
 * three): keys spread over a cluster's primaries, revocations on sharded pub/sub, which
 * topology runs the session scripts, and a Sentinel failover while requests flow (every answer
 * given meanwhile checked), on a password-protected set of this file's own.
 */
import { randomUUID } from 'node:crypto';
import { createClient } from '@keyv/redis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { findRedisServerBinary } from '../../../test/support/redis-server.js';
import { startSentinelSet, type SentinelSet } from '../../../test/support/redis-topology.js';
import { claimsOf, createHarness, redisTopologies, type SessionHarness } from './support/session-harness.js';

const clusterNodes = inject('redisClusterNodes');
const binary = findRedisServerBinary();
const cluster = redisTopologies().find((t) => t.name === 'cluster');
const skipped = (name: string, ok: boolean) => (ok ? name : `${name} — SKIPPED, redis-server not found`);

const nodeClient = (node: string) => createClient({ url: `redis://${node}` });

async function eachNode<T>(nodes: string, run: (client: ReturnType<typeof nodeClient>) => Promise<T>): Promise<T[]> {
  return Promise.all(
    nodes.split(',').map(async (node) => {
      const client = nodeClient(node);
      await client.connect();
      try {
        return await run(client);
      } finally {
        await client.close();
      }
    }),
  );
}

describe.skipIf(!cluster)(skipped('Redis Cluster', !!cluster), () => {
  let a: SessionHarness;
  let b: SessionHarness;
  beforeAll(async () => {
    a = await createHarness({ provider: 'redis', redisUrl: inject('redisUrl'), env: cluster!.env });
    b = await a.twin();
  });
  afterAll(async () => a.close());

  it('runs the session operations step by step: one operation\'s keys span hash slots', () => {
    expect(a.stores.cache.scripts).toBeUndefined();
  });

  it('spreads the sessions of one fleet over every primary', async () => {
    for (let i = 0; i < 30; i++) await a.sessions.upgrade(a.issuer.issueLoginPair(`spread-${i}`).accessToken);
    const prefix = a.stores.options.keyPrefix;
    const perNode = await eachNode(clusterNodes!, async (client) => (await client.keys(`${prefix}:session:*`)).length);
    expect(perNode.reduce((x, y) => x + y, 0)).toBe(30);
    expect(perNode.every((count) => count > 0)).toBe(true);
  });

  it('broadcasts revocations on sharded pub/sub, which reach the other server', async () => {
    const channel = `${a.stores.options.keyPrefix}:revocations`;
    const sharded = await eachNode(clusterNodes!, async (client) => Number((await client.sendCommand(['PUBSUB', 'SHARDNUMSUB', channel]) as unknown[])[1]));
    const classic = await eachNode(clusterNodes!, async (client) => Number((await client.sendCommand(['PUBSUB', 'NUMSUB', channel]) as unknown[])[1]));
    expect(sharded.reduce((x, y) => x + y, 0)).toBe(2);
    expect(classic.reduce((x, y) => x + y, 0)).toBe(0);
    const session = await a.sessions.upgrade(a.issuer.issueLoginPair('sharded-1').accessToken);
    await b.sessions.validate(session.accessToken);
    expect(b.sessions.peek(session.accessToken)).toBeDefined();
    await a.sessions.revoke(session.accessToken);
    await expect.poll(() => b.sessions.peek(session.accessToken), { timeout: 5000, interval: 5 }).toBeUndefined();
  });
});

describe.skipIf(!binary)(skipped('Sentinel failover during traffic', !!binary), () => {
  const password = `pw-${randomUUID()}`;
  let set: SentinelSet;
  let h: SessionHarness;

  beforeAll(async () => {
    set = await startSentinelSet(binary!, { master: 'game', password });
    h = await createHarness({
      provider: 'redis',
      // Only the credentials of the URL are used with sentinel: they authenticate sentinels and data servers.
      redisUrl: `redis://:${password}@127.0.0.1:1`,
      env: { SVC__PERSISTENCE__CACHE__TOPOLOGY: 'sentinel', SVC__PERSISTENCE__CACHE__NODES: set.nodes, SVC__PERSISTENCE__CACHE__SENTINEL_MASTER: 'game' },
      security: { session: { 'near-cache-seconds': 0 } },
    });
  }, 30_000);
  afterAll(async () => {
    await h?.close();
    await set?.stop();
  });

  it('runs the session operations as one script each, as on a single server', () => {
    expect(h.stores.cache.scripts).toBeDefined();
  });

  it('serves again within 10 s of the primary being killed; revoked stays revoked, written before stays valid', async () => {
    const kept = await Promise.all(Array.from({ length: 20 }, (_, i) => h.sessions.upgrade(h.issuer.issueLoginPair(`kept-${i}`).accessToken)));
    const revoked = await Promise.all(Array.from({ length: 20 }, (_, i) => h.sessions.upgrade(h.issuer.issueLoginPair(`gone-${i}`).accessToken)));
    const upgradedJwt = h.issuer.issueLoginPair('upgraded-once').accessToken;
    await h.sessions.upgrade(upgradedJwt);
    for (const session of revoked) await h.sessions.revoke(session.accessToken);
    // Replication is ordered: once the replica acknowledges a later write, it has every earlier one.
    const primary = createClient({ url: `redis://:${password}@127.0.0.1:${set.primaryPort}` });
    await primary.connect();
    await primary.set(`probe-${randomUUID()}`, '1');
    expect(await primary.sendCommand(['WAIT', '1', '2000'])).toBe(1);
    primary.destroy();

    // Every answer given during the failover must be right: unavailable is allowed, a revoked
    // session answered valid or a kept one answered invalid is not.
    let stop = false;
    let served = 0;
    const wrong: string[] = [];
    const traffic = (async () => {
      for (let i = 0; !stop; i++) {
        const keptOne = kept[i % kept.length]!;
        const revokedOne = revoked[i % revoked.length]!;
        try {
          if ((await h.sessions.validate(keptOne.accessToken)) === undefined) wrong.push(`kept ${i} answered invalid`);
          else served++;
          if ((await h.sessions.validate(revokedOne.accessToken)) !== undefined) wrong.push(`revoked ${i} answered valid`);
        } catch {
          // unavailable during the failover
        }
        await new Promise((r) => setTimeout(r, 5));
      }
    })();
    let backAfterMs = Infinity;
    try {
      await expect.poll(() => served, { timeout: 5000 }).toBeGreaterThan(10);
      const killedAt = performance.now();
      await set.killPrimary();
      while (performance.now() - killedAt < 15_000) {
        try {
          await h.sessions.upgrade(h.issuer.issueLoginPair(`after-${randomUUID()}`).accessToken);
          backAfterMs = performance.now() - killedAt;
          break;
        } catch {
          await new Promise((r) => setTimeout(r, 50));
        }
      }
      // Validation traffic goes on after the failover, not only the upgrade that found Redis back.
      const servedAfter = served;
      await expect.poll(() => served, { timeout: 5000 }).toBeGreaterThan(servedAfter + 10);
    } finally {
      stop = true;
      await traffic;
    }
    expect(backAfterMs).toBeLessThan(10_000);
    expect(wrong).toEqual([]);

    for (const session of kept) expect(await h.sessions.validate(session.accessToken)).toMatchObject({ id: expect.stringMatching(/^kept-/) });
    for (const session of revoked) expect(await h.sessions.validate(session.accessToken)).toBeUndefined();
    for (const session of revoked) await expect(h.sessions.refresh(session.refreshToken)).rejects.toMatchObject({ reason: 'revoked' });
    expect(await h.sessions.isJwtInvalidated(claimsOf(h, upgradedJwt))).toBe(true);
    await expect(h.sessions.upgrade(upgradedJwt)).rejects.toMatchObject({ reason: 'revoked' });
  }, 40_000);
});
