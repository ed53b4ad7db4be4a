/**
 * The authenticated datagram form against a real socket and the real session
 * services: answered in the same form, replay window, bit flips, wrong keys and
 * unknown sids dropped silently, revoked and refreshed sessions, requireMac, the
 * bounded window memory and the reply budget.
 */
import { randomBytes } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLoggerFactory, UdpKeyring, type UpgradeResult } from '@portcullis/core';
import { createMemoryTestStack, type TestStack } from '@portcullis/core/testing';
import { createUdpTransport, type UdpTransport, type UdpTransportOptions } from '../src/index.js';
import { macPeer, seal, settle, type MacPeer } from './support/mac-peer.js';
import { TestGamePortal } from '../../../test/conformance/support/test-portal.js';

let stack: TestStack;
let udp: UdpTransport;
let port: number;
let session: UpgradeResult;
let peer: MacPeer;

async function startUdp(options: Partial<UdpTransportOptions> = {}): Promise<void> {
  udp = createUdpTransport({ dispatcher: stack.dispatcher, keyring: stack.container.resolve(UdpKeyring), loggers: silentLoggerFactory, ...options });
  port = (await udp.bind(0, '127.0.0.1')).port;
}

beforeEach(async () => {
  stack = await createMemoryTestStack({ portals: [TestGamePortal] });
  await startUdp();
  session = await stack.sessions.upgrade(stack.jwt('player-1'));
  peer = await macPeer(port, session);
});
afterEach(async () => {
  await peer.close();
  await udp.close();
  await stack.close();
});

const move = (id: number) => ({ id, portal: '/game', gate: 'move', data: { x: id, y: 2 } });

/** Nothing but the drop counters moved: no reply was sent for what was dropped. */
async function droppedSilently(kind: 'mac' | 'replay' | 'garbage' | 'bearer', count: number): Promise<void> {
  await expect.poll(() => udp.dropped[kind], { timeout: 3000, interval: 5 }).toBe(count);
  await settle();
}

describe('authenticated UDP datagrams', () => {
  it('answers a sealed request in the same form: same sid, the server\'s own increasing sequence numbers, a MAC under the session key', async () => {
    await peer.send(peer.seal(move(1)));
    await peer.send(peer.seal(move(2)));
    const first = await peer.reply(1);
    const second = await peer.reply(2);
    for (const { parts, authentic } of [first, second]) {
      expect(authentic).toBe(true);
      expect(Buffer.from(parts.sid).equals(peer.sid)).toBe(true);
    }
    expect(first.reply).toEqual({ id: 1, ok: true, data: { x: 1, y: 2, by: 'player-1' } });
    expect(second.parts.seq).toBeGreaterThan(first.parts.seq);
    expect(udp.replayWindows).toBe(1);
  });

  it('drops a replayed datagram without a reply, once per copy', async () => {
    const datagram = peer.seal(move(1));
    await peer.send(datagram);
    await peer.reply(1);
    await peer.send(datagram);
    await peer.send(datagram);
    await droppedSilently('replay', 2);
    expect(peer.received).toHaveLength(1);
  });

  it('answers datagrams reordered inside the 64 newest, and drops those older than that', async () => {
    await peer.send(peer.seal(move(1), 100n));
    await peer.send(peer.seal(move(2), 40n));
    await peer.send(peer.seal(move(3), 99n));
    await peer.reply(1);
    await peer.reply(2);
    await peer.reply(3);
    await peer.send(peer.seal(move(4), 36n));
    await peer.send(peer.seal(move(5), 1n));
    await droppedSilently('replay', 2);
    expect(peer.received).toHaveLength(3);
  });

  it('drops a datagram with one bit flipped anywhere (version, sid, sequence number, body, MAC) without a reply', async () => {
    const good = peer.seal(move(1), 500n);
    for (let byte = 0; byte < good.length; byte++) {
      const flipped = Buffer.from(good);
      flipped[byte]! ^= 1 << (byte % 8);
      await peer.send(flipped);
    }
    // A flipped version byte makes it a JSON datagram, which is garbage; every other flip fails the MAC.
    await expect.poll(() => udp.dropped.mac + udp.dropped.garbage, { timeout: 3000, interval: 5 }).toBe(good.length);
    expect(udp.dropped.garbage).toBe(1);
    await settle();
    expect(peer.received).toEqual([]);
    await peer.send(good);
    expect((await peer.reply(1)).reply).toMatchObject({ ok: true });
  });

  it('drops a datagram sealed with a wrong key, or naming a sid the server never issued, and keeps no window for it', async () => {
    await peer.send(seal(peer.sid, randomBytes(32), 1n, move(1)));
    await peer.send(seal(randomBytes(16), peer.key, 2n, move(2)));
    await droppedSilently('mac', 2);
    expect(peer.received).toEqual([]);
    expect(udp.replayWindows).toBe(0);
  });

  it('grows nothing for a flood of made-up sids', async () => {
    for (let burst = 0; burst < 10; burst++) {
      for (let i = 0; i < 100; i++) await peer.send(seal(randomBytes(16), randomBytes(32), 1n, move(i)));
      await expect.poll(() => udp.dropped.mac, { timeout: 3000, interval: 5 }).toBe((burst + 1) * 100);
    }
    expect(udp.replayWindows).toBe(0);
    expect(peer.received).toEqual([]);
  });

  it('keeps at most maxReplayWindows sessions, forgetting the least recently used', async () => {
    await udp.close();
    await startUdp({ maxReplayWindows: 2 });
    const peers = await Promise.all(['a', 'b', 'c'].map(async (name) => macPeer(port, await stack.sessions.upgrade(stack.jwt(name)))));
    for (const [i, p] of peers.entries()) {
      await p.send(p.seal(move(i)));
      await p.reply(i);
    }
    expect(udp.replayWindows).toBe(2);
    expect(udp.replayWindowsEvicted).toBe(1);
    await Promise.all(peers.map((p) => p.close()));
  });

  it('answers a datagram of a revoked session with an authenticated unauthorized, at a session gate and an open one', async () => {
    await peer.send(peer.seal(move(1)));
    await peer.reply(1);
    await stack.sessions.revoke(session.accessToken);
    await peer.send(peer.seal(move(2)));
    await peer.send(peer.seal({ id: 3, portal: '/game', gate: 'ping' }));
    for (const id of [2, 3]) {
      const { authentic, reply } = await peer.reply(id);
      expect(authentic).toBe(true);
      expect(reply).toMatchObject({ id, ok: false, error: { code: 'unauthorized' } });
    }
  });

  it('after a session refresh the old sid and key get only an authenticated unauthorized, and the new ones work', async () => {
    const refreshed = await stack.sessions.refresh(session.refreshToken);
    if (refreshed.kind !== 'session') throw new Error('expected a session refresh');
    expect(refreshed.session.udpKey).not.toBe(session.udpKey);
    await peer.send(peer.seal(move(1)));
    const old = await peer.reply(1);
    expect(old.authentic).toBe(true);
    expect(old.reply).toMatchObject({ ok: false, error: { code: 'unauthorized' } });
    const next = await macPeer(port, refreshed.session);
    await next.send(next.seal(move(2)));
    expect((await next.reply(2)).reply).toEqual({ id: 2, ok: true, data: { x: 2, y: 2, by: 'player-1' } });
    await next.close();
  });

  it('carries a session only: a JWT gate answers unauthorized, and a token in the body is ignored', async () => {
    await peer.send(peer.seal({ id: 1, portal: '/game', gate: 'whoami', token: stack.jwt('someone-else') }));
    expect((await peer.reply(1)).reply).toMatchObject({ ok: false, error: { code: 'unauthorized' } });
    await peer.send(peer.seal({ ...move(2), token: await stack.session('someone-else') }));
    expect((await peer.reply(2)).reply).toMatchObject({ ok: true, data: { by: 'player-1' } });
  });

  it('drops a sealed datagram whose body is not a request, without a reply', async () => {
    await peer.send(seal(peer.sid, peer.key, 9n, 'not a request'));
    await droppedSilently('garbage', 1);
    expect(peer.received).toEqual([]);
  });

  it('accepts the UDP keys of sessions made before a key rotation while their old key is a previous key', async () => {
    const oldKey = Buffer.alloc(32, 7);
    await udp.close();
    await startUdp({ keyring: new UdpKeyring(randomBytes(32), [oldKey]) });
    const rotated = await macPeer(port, session);
    await rotated.send(rotated.seal(move(1)));
    expect((await rotated.reply(1)).authentic).toBe(true);
    await rotated.close();
  });
});

describe('UDP reply budget', () => {
  it('answers a sealed request beyond the unauthenticated budget: its MAC proves the sender holds the key', async () => {
    await peer.send(peer.seal({ id: 1, portal: '/game', gate: 'inventory' }));
    expect((await peer.reply(1)).reply).toEqual({ id: 1, ok: true, data: 'x'.repeat(600) });
  });

  it('keeps the budget for a JSON datagram with a valid token: anyone can sign up for one and spoof a victim\'s address', async () => {
    // Attack: a small request with a valid token at a gate with a large answer, source address spoofed to a victim.
    const victim = createSocket('udp4');
    const received: Buffer[] = [];
    victim.on('message', (message) => received.push(message));
    await new Promise<void>((resolve) => victim.bind(0, '127.0.0.1', () => resolve()));
    const request = Buffer.from(JSON.stringify({ id: 1, portal: '/game', gate: 'inventory', token: session.accessToken }));
    victim.send(request, port, '127.0.0.1');
    await expect.poll(() => udp.dropped.amplification, { timeout: 3000, interval: 5 }).toBe(1);
    await settle();
    expect(received).toEqual([]);
    await new Promise<void>((resolve) => victim.close(() => resolve()));
  });
});

describe('requireMac', () => {
  it('drops JSON datagrams that carry a token without a reply, and still serves sealed and anonymous ones', async () => {
    await udp.close();
    await startUdp({ requireMac: true });
    const json = createSocket('udp4');
    const received: Buffer[] = [];
    json.on('message', (message) => received.push(message));
    await new Promise<void>((resolve) => json.bind(0, '127.0.0.1', () => resolve()));
    const padded = (frame: object) => Buffer.from(JSON.stringify({ ...frame, pad: 'x'.repeat(100) }));
    json.send(padded({ ...move(1), token: session.accessToken }), port, '127.0.0.1');
    json.send(padded({ id: 2, portal: '/game', gate: 'ping', token: 'anything' }), port, '127.0.0.1');
    await droppedSilently('bearer', 2);
    expect(received).toEqual([]);
    json.send(padded({ id: 3, portal: '/game', gate: 'ping' }), port, '127.0.0.1');
    await expect.poll(() => received.map((m) => JSON.parse(m.toString())), { timeout: 3000 }).toEqual([{ id: 3, ok: true, data: 'pong' }]);
    const sealed = await macPeer(port, session);
    await sealed.send(sealed.seal(move(4)));
    expect((await sealed.reply(4)).reply).toMatchObject({ ok: true });
    await sealed.close();
    await new Promise<void>((resolve) => json.close(() => resolve()));
  });
});
