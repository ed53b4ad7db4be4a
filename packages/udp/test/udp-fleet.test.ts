/**
 * Two servers of one fleet on one Redis: a session upgraded on one is served over
 * authenticated UDP by the other, which rebuilds the UDP key from the sid alone;
 * nothing in Redis gives the key away. On a single Redis server, a cluster and a
 * sentinel set.
 */
import { createClient, createSentinel } from '@keyv/redis';
import { afterEach, beforeEach, describe, expect, inject, it } from 'vitest';
import { silentLoggerFactory, UdpKeyring } from '@portcullis/core';
import { createRedisTestStack, type TestStack } from '@portcullis/core/testing';
import { createUdpTransport, type UdpTransport } from '../src/index.js';
import { macPeer } from './support/mac-peer.js';
import { TestGamePortal } from '../../../test/conformance/support/test-portal.js';
import { everyRedisTopology, hostPorts, type RedisUnderTest } from '../../../test/support/redis-topologies.js';

const redisUrl = inject('redisUrl');

/** Plain clients that reach every key of the topology: one per cluster primary, else one on the primary. */
async function adminClients({ name, env }: RedisUnderTest) {
  const nodes = hostPorts(env.SVC__PERSISTENCE__CACHE__NODES ?? '');
  const clients = name === 'cluster'
    ? nodes.map(({ host, port }) => createClient({ url: `redis://${host}:${port}` }))
    : [name === 'sentinel' ? createSentinel({ name: 'mymaster', sentinelRootNodes: nodes }) : createClient({ url: redisUrl! })];
  await Promise.all(clients.map((client) => client.connect()));
  return clients;
}

for (const { name, env: found } of everyRedisTopology()) describe.skipIf(!found)(`authenticated UDP across a fleet on Redis (${name})${found ? '' : ' — SKIPPED, redis-server not found'}`, () => {
  const env = found ?? {};
  let serverA: TestStack;
  let serverB: TestStack;
  let udpA: UdpTransport;

  beforeEach(async () => {
    serverA = await createRedisTestStack(redisUrl!, { portals: [TestGamePortal], env });
    serverB = await createRedisTestStack(redisUrl!, { portals: [TestGamePortal], keyPrefix: serverA.keyPrefix, env });
    udpA = createUdpTransport({ dispatcher: serverA.dispatcher, keyring: serverA.container.resolve(UdpKeyring), loggers: silentLoggerFactory });
    await udpA.bind(0, '127.0.0.1');
  });
  afterEach(async () => {
    await udpA.close();
    await serverB.close();
    await serverA.close();
  });

  it('serves a session upgraded on another server, and answers unauthorized once it is revoked there', async () => {
    const session = await serverB.sessions.upgrade(serverB.jwt('oscar'));
    const peer = await macPeer(udpA.address().port, session);
    await peer.send(peer.seal({ id: 1, portal: '/game', gate: 'move', data: { x: 1, y: 1 } }));
    expect((await peer.reply(1)).reply).toEqual({ id: 1, ok: true, data: { x: 1, y: 1, by: 'oscar' } });
    await serverB.sessions.revoke(session.accessToken);
    // Until the revocation event reaches server A its answer may still be ok; each attempt has an
    // id of its own, so a late ok to an earlier attempt is never read as the answer to a later one.
    let id = 1;
    await expect
      .poll(async () => {
        id++;
        await peer.send(peer.seal({ id, portal: '/game', gate: 'move', data: { x: 1, y: 1 } }));
        return (await peer.reply(id)).reply;
      }, { timeout: 5000 })
      .toMatchObject({ ok: false, error: { code: 'unauthorized' } });
    await peer.close();
  });

  it('keeps nothing in Redis that gives the UDP key: no key or value holds it, in any encoding', async () => {
    const session = await serverB.sessions.upgrade(serverB.jwt('trent'));
    const udpKey = Buffer.from(session.udpKey!, 'base64url');
    const admins = await adminClients({ name, env });
    try {
      const everything: string[] = [];
      let keyCount = 0;
      for (const admin of admins) {
        const keys = await admin.keys(`*${serverA.keyPrefix}*`);
        keyCount += keys.length;
        everything.push(...keys);
        for (const key of keys) {
          const type = await admin.type(key);
          if (type === 'string') everything.push((await admin.get(key)) ?? '');
          if (type === 'set') everything.push(...(await admin.sMembers(key)));
          if (type === 'hash') everything.push(JSON.stringify(await admin.hGetAll(key)));
        }
      }
      // The session's access, refresh and udp-session entries at least.
      expect(keyCount).toBeGreaterThanOrEqual(3);
      const dump = everything.join('\n');
      for (const encoding of ['base64url', 'base64', 'hex', 'latin1'] as const) expect(dump).not.toContain(udpKey.toString(encoding));
    } finally {
      await Promise.all(admins.map((admin) => admin.close()));
    }
  });
});
