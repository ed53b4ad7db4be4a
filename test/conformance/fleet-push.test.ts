/**
 * Push to a principal across a fleet: two servers on one Redis, the principal's
 * WebSocket and TCP connections on server B, the push made on server A; on a single
 * Redis server, a cluster (sharded pub/sub) and a sentinel set.
 */
import { afterEach, beforeEach, describe, expect, inject, it } from 'vitest';
import { createRedisTestStack, type TestStack } from '@portcullis/core/testing';
import { everyRedisTopology, type RedisUnderTest } from '../support/redis-topologies.js';
import { rawPublisher } from './support/raw-publisher.js';
import { TestGamePortal } from './support/test-portal.js';
import { tcpDriver, wsDriver, type RealtimeClient } from './support/transport-drivers.js';

const redisUrl = inject('redisUrl');
const isPush = (frame: unknown) => (frame as { type?: string } | null)?.type === 'event';

for (const { name, env: found } of everyRedisTopology()) describe.skipIf(!found)(`push to a principal on every server of a Redis fleet (${name})${found ? '' : ' — SKIPPED, redis-server not found'}`, () => {
  const env = found ?? {};
  const topology: RedisUnderTest = { name, env };
  let serverA: TestStack;
  let serverB: TestStack;
  const ws = wsDriver();
  const tcp = tcpDriver();
  const clients: RealtimeClient[] = [];
  const connect = async (driver: typeof ws | typeof tcp, token: string) => {
    const client = await driver.connect(token);
    clients.push(client);
    // A request answered means the connection is registered under its principal.
    expect(await client.request('/game', 'move', { x: 1, y: 1 })).toMatchObject({ ok: true });
    return client;
  };

  beforeEach(async () => {
    serverA = await createRedisTestStack(redisUrl!, { portals: [TestGamePortal], env });
    serverB = await createRedisTestStack(redisUrl!, { portals: [TestGamePortal], keyPrefix: serverA.keyPrefix, env });
    await ws.start(serverB);
    await tcp.start(serverB);
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
    await ws.stop();
    await tcp.stop();
    await serverB.close();
    await serverA.close();
  });

  it("reaches the principal's WebSocket and TCP connections on another server, and no other principal's", async () => {
    const aliceWs = await connect(ws, await serverB.session('alice'));
    const aliceTcp = await connect(tcp, await serverA.session('alice'));
    const bobWs = await connect(ws, await serverB.session('bob'));
    const bobTcp = await connect(tcp, await serverB.session('bob'));

    // Server A holds none of alice's connections: it answers 0, the fleet still gets the push.
    expect(serverA.registry.sendToPrincipal('alice', { type: 'event', data: { match: 7 } })).toBe(0);

    expect(await aliceWs.inbox.take(isPush)).toEqual({ type: 'event', data: { match: 7 } });
    expect(await aliceTcp.inbox.take(isPush)).toEqual({ type: 'event', data: { match: 7 } });
    expect(await bobWs.inbox.quietFor(150)).toBe(true);
    expect(await bobTcp.inbox.quietFor(0)).toBe(true);
    expect([...bobWs.inbox.all, ...bobTcp.inbox.all].some(isPush)).toBe(false);
  });

  it('delivers a push made on a server once to its own connections too', async () => {
    const aliceWs = await connect(ws, await serverB.session('alice'));
    expect(serverB.registry.sendToPrincipal('alice', { type: 'event', data: 'here' })).toBe(1);
    expect(await aliceWs.inbox.take(isPush)).toEqual({ type: 'event', data: 'here' });
    expect(await aliceWs.inbox.quietFor(150)).toBe(true);
    expect(aliceWs.inbox.all.filter(isPush)).toHaveLength(1);
  });

  it('gives a connection whose session was revoked nothing pushed after the revocation, even before it closed', async () => {
    const revokedToken = await serverB.session('carol');
    const revokedWs = await connect(ws, revokedToken);
    const revokedTcp = await connect(tcp, revokedToken);
    const liveWs = await connect(ws, await serverB.session('carol'));

    // No wait between the two: server B hears the revocation before the push, both from A.
    await serverA.sessions.revoke(revokedToken);
    serverA.registry.sendToPrincipal('carol', { type: 'event', data: 'after logout' });

    expect(await liveWs.inbox.take(isPush)).toEqual({ type: 'event', data: 'after logout' });
    expect((await revokedWs.closed).code).toBe(4401);
    await revokedTcp.closed;
    expect([...revokedWs.inbox.all, ...revokedTcp.inbox.all].some(isPush)).toBe(false);
  });

  it('reads the documented push message from the channel and ignores malformed ones, staying up', async () => {
    const aliceWs = await connect(ws, await serverB.session('alice'));
    const raw = await rawPublisher(topology);
    try {
      const channel = `${serverA.keyPrefix}:revocations`;
      for (const junk of ['not json', '{"o":"x","p":7,"f":{"type":"event"}}', '{"o":"x","p":"alice"}', 'null', '{"p":"alice","f":1}']) {
        await raw.publish(channel, junk);
      }
      await raw.publish(channel, JSON.stringify({ o: 'elsewhere', p: 'alice', f: { type: 'event', data: 'raw' } }));
    } finally {
      await raw.close();
    }
    expect(await aliceWs.inbox.take(isPush)).toEqual({ type: 'event', data: 'raw' });
    expect(aliceWs.inbox.all.filter(isPush)).toHaveLength(1);
    expect(await aliceWs.request('/game', 'move', { x: 2, y: 2 })).toMatchObject({ ok: true });
  });
});
