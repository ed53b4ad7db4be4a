/**
 * Two servers of one fleet on one Redis: a session upgraded on one is served over
 * authenticated UDP by the other, which rebuilds the UDP key from the sid alone;
 * nothing in Redis gives the key away.
 */
import { createClient } from '@keyv/redis';
import { afterEach, beforeEach, describe, expect, inject, it } from 'vitest';
import { silentLoggerFactory, UdpKeyring } from '@portcullis/core';
import { createRedisTestStack, type TestStack } from '@portcullis/core/testing';
import { createUdpTransport, type UdpTransport } from '../src/index.js';
import { macPeer } from './support/mac-peer.js';
import { TestGamePortal } from '../../../test/conformance/support/test-portal.js';

const redisUrl = inject('redisUrl');

describe.skipIf(!redisUrl)('authenticated UDP across a fleet on Redis', () => {
  let serverA: TestStack;
  let serverB: TestStack;
  let udpA: UdpTransport;

  beforeEach(async () => {
    serverA = await createRedisTestStack(redisUrl!, { portals: [TestGamePortal] });
    serverB = await createRedisTestStack(redisUrl!, { portals: [TestGamePortal], keyPrefix: serverA.keyPrefix });
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
    await expect
      .poll(async () => {
        await peer.send(peer.seal({ id: 2, portal: '/game', gate: 'move', data: { x: 1, y: 1 } }));
        return (await peer.reply(2)).reply;
      }, { timeout: 5000 })
      .toMatchObject({ ok: false, error: { code: 'unauthorized' } });
    await peer.close();
  });

  it('keeps nothing in Redis that gives the UDP key: no key or value holds it, in any encoding', async () => {
    const session = await serverB.sessions.upgrade(serverB.jwt('trent'));
    const udpKey = Buffer.from(session.udpKey!, 'base64url');
    const admin = createClient({ url: redisUrl! });
    await admin.connect();
    try {
      const keys = await admin.keys(`${serverA.keyPrefix}*`);
      expect(keys.length).toBeGreaterThan(0);
      const everything: string[] = [...keys];
      for (const key of keys) {
        const type = await admin.type(key);
        if (type === 'string') everything.push((await admin.get(key)) ?? '');
        if (type === 'set') everything.push(...(await admin.sMembers(key)));
        if (type === 'hash') everything.push(JSON.stringify(await admin.hGetAll(key)));
      }
      const dump = everything.join('\n');
      for (const encoding of ['base64url', 'base64', 'hex', 'latin1'] as const) expect(dump).not.toContain(udpKey.toString(encoding));
    } finally {
      await admin.quit();
    }
  });
});
