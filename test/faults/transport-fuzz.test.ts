/**
 * Fuzz over real sockets on 127.0.0.1: the same 10,000 seeded hostile inputs sent
 * through the WebSocket message path, the TCP framing and auth handshake, and the
 * UDP message handler (called directly for every input, plus real datagrams in
 * bursts), in the JSON form and in the authenticated form (the inputs as sealed
 * bodies, sealed datagrams cut short or with a byte changed, made-up sids, old
 * sequence numbers). No exception may escape, every authenticated reply is sealed
 * with the session's key, and each transport still answers a real request afterwards.
 * A flood of a rate-limited gate, interleaved with hostile frames, passes at most the
 * limit and is answered `rate_limited` beyond it, with the connection kept open.
 */
import { createSocket } from 'node:dgram';
import { connect as netConnect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeFrame, readUdpDatagram } from '@portcullis/protocol';
import { udpMacMatches } from '@portcullis/core/transport';
import WebSocket from 'ws';
import { createMemoryTestStack, type TestStack } from '@portcullis/core/testing';
import type { Reply } from '../conformance/support/inbox.js';
import { LIMITED_PER_CONNECTION, TestGamePortal } from '../conformance/support/test-portal.js';
import { tcpDriver, udpDriver, wsDriver, type RealtimeClient, type TransportDriver } from '../conformance/support/transport-drivers.js';
import { fuzzInputs, seededRandom } from './support/fuzz-inputs.js';
import { macPeer, seal, sealBytes } from '../../packages/udp/test/support/mac-peer.js';

const SEED = 0x5eed_0107;
const COUNT = 10_000;
const inputs = fuzzInputs(SEED, COUNT);
const garbage = inputs.flatMap((input) => {
  if (input.text === undefined) return [];
  try {
    JSON.parse(input.text);
    return [];
  } catch {
    return [input.text];
  }
});

let stack: TestStack;
const escaped: unknown[] = [];
const onEscape = (error: unknown) => escaped.push(error);

beforeAll(async () => {
  process.on('unhandledRejection', onEscape);
  process.on('uncaughtException', onEscape);
  stack = await createMemoryTestStack({ portals: [TestGamePortal] });
});
afterAll(async () => {
  process.off('unhandledRejection', onEscape);
  process.off('uncaughtException', onEscape);
  await stack.close();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Resolves once `count()` stops changing for `quietMs` (or after `maxMs`). */
async function quiesce(count: () => number, quietMs = 150, maxMs = 5000): Promise<void> {
  const deadline = Date.now() + maxMs;
  let last = -1;
  while (Date.now() < deadline && count() !== last) {
    last = count();
    await sleep(quietMs);
  }
}

/** Polls `done` every 20 ms until it holds or `maxMs` passes. */
async function until(done: () => boolean, maxMs: number): Promise<void> {
  const deadline = Date.now() + maxMs;
  while (!done() && Date.now() < deadline) await sleep(20);
}

/**
 * 200 requests to the `limited` gate with hostile inputs between them, on one
 * connection: exactly the limit pass, every other one is `rate_limited` with a
 * retry hint, and the connection still answers an open gate.
 */
async function floodLimitedGate(driver: TransportDriver): Promise<void> {
  const client: RealtimeClient = await driver.connect(await stack.session('flooder'));
  const send = (i: number) => {
    // Noise that is no request at all, so its replies (id null) cannot be taken for the flood's.
    client.sendRaw(garbage[i % garbage.length]!);
    return client.request('/game', 'limited', { n: i }, 5000);
  };
  // Datagrams go one after another: a burst of 200 would overrun the socket buffers, not the limit.
  const replies: Reply[] = [];
  if (driver.name === 'udp') for (let i = 0; i < 200; i++) replies.push(await send(i));
  else replies.push(...(await Promise.all(Array.from({ length: 200 }, (_, i) => send(i)))));
  const passed = replies.filter((r: Reply) => r.ok);
  expect(passed).toHaveLength(LIMITED_PER_CONNECTION);
  for (const refused of replies.filter((r: Reply) => !r.ok)) {
    expect(refused.error).toMatchObject({ code: 'rate_limited', message: expect.any(String), retryAfterMs: expect.any(Number) });
    expect(refused.error!.retryAfterMs!).toBeGreaterThan(0);
  }
  expect(await client.request('/game', 'ping')).toMatchObject({ ok: true, data: 'pong' });
  await client.close();
}

describe('fuzz over WebSocket', () => {
  const driver = wsDriver();
  beforeAll(() => driver.start(stack));
  afterAll(() => driver.stop());

  it('answers every hostile message on an authenticated socket, in order, and keeps serving', async () => {
    const socket = new WebSocket(driver.url(), { headers: { Authorization: `Bearer ${await stack.session('fuzzer')}` } });
    socket.on('error', () => {});
    let replies = 0;
    let unparsable = 0;
    socket.on('message', (data) => {
      replies++;
      try {
        JSON.parse(data.toString());
      } catch {
        unparsable++;
      }
    });
    await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
    for (const [i, input] of inputs.entries()) {
      socket.send(input.text ?? input.bytes, { binary: input.text === undefined });
      if (i % 200 === 199) await quiesce(() => replies, 5, 2000);
    }
    await quiesce(() => replies);
    expect(socket.readyState).toBe(WebSocket.OPEN);
    expect(replies).toBe(COUNT);
    expect(unparsable).toBe(0);
    socket.close();
  });

  it('answers a flood of a rate-limited gate amid hostile frames: the limit passes, the rest is rate_limited, the socket stays open', () => floodLimitedGate(driver));

  it('survives a hostile first message on 300 header-less sockets and invalid UTF-8 text frames', async () => {
    const closes: number[] = [];
    for (let i = 0; i < 300; i += 50) {
      await Promise.all(
        inputs.slice(i, i + 50).map(async (input, j) => {
          const socket = new WebSocket(driver.url());
          socket.on('error', () => {});
          const closed = new Promise<number>((resolve) => socket.once('close', (code) => resolve(code)));
          await new Promise((resolve) => socket.once('open', resolve));
          // Every tenth: raw bytes as a *text* frame, invalid UTF-8 for the ws parser.
          if (j % 10 === 0) socket.send(Buffer.from([0xc3, 0x28, 0xff]), { binary: false });
          else socket.send(input.text ?? input.bytes, { binary: input.text === undefined });
          await Promise.race([closed, sleep(300)]);
          socket.terminate();
          closes.push(await closed);
        }),
      );
    }
    expect(closes).toContain(1007);
    const client = await driver.connect();
    expect(await client.request('/game', 'ping')).toMatchObject({ ok: true, data: 'pong' });
    await client.close();
  });
});

describe('fuzz over TCP', () => {
  const driver = tcpDriver();
  beforeAll(() => driver.start(stack));
  afterAll(() => driver.stop());

  it('answers every hostile frame body after the handshake, in order, and keeps serving', async () => {
    const client = await driver.connect(await stack.session('fuzzer'));
    const before = client.inbox.all.length;
    for (const [i, input] of inputs.entries()) {
      client.sendRaw(input.bytes);
      if (i % 200 === 199) await quiesce(() => client.inbox.all.length, 5, 2000);
    }
    await quiesce(() => client.inbox.all.length);
    expect(client.inbox.all.length - before).toBe(COUNT);
    expect(client.inbox.all.filter((f) => (f as { unparsable?: string }).unparsable !== undefined)).toEqual([]);
    // A fresh id: the fuzz replies already in the inbox reuse small ids.
    client.sendRaw(JSON.stringify({ id: 1e9, portal: '/game', gate: 'move', data: { x: 1, y: 2 } }));
    expect(await client.inbox.take((f) => (f as { id?: number }).id === 1e9)).toMatchObject({ ok: true, data: { x: 1, y: 2, by: 'fuzzer' } });
    await client.close();
  });

  it('answers a flood of a rate-limited gate amid hostile frames: the limit passes, the rest is rate_limited, the connection stays open', () => floodLimitedGate(driver));

  it('closes connections that open with raw garbage or a truncated frame, and keeps serving', async () => {
    let closedCount = 0;
    for (let i = 0; i < 400; i += 50) {
      await Promise.all(
        inputs.slice(i, i + 50).map(async (input, j) => {
          const socket = netConnect({ port: driver.port(), host: '127.0.0.1' });
          socket.on('error', () => {});
          socket.on('data', () => {});
          const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
          await new Promise((resolve) => socket.once('connect', resolve));
          const frame = encodeFrame(input.bytes);
          socket.write(j % 2 === 0 ? input.bytes : frame.subarray(0, Math.max(1, frame.length >> 1)));
          socket.end();
          await Promise.race([closed, sleep(2000)]);
          socket.destroy();
          await closed;
          closedCount++;
        }),
      );
    }
    expect(closedCount).toBe(400);
    await until(() => driver.transport().connectionCount === 0, 5000);
    expect(driver.transport().connectionCount).toBe(0);
    const client = await driver.connect();
    expect(await client.request('/game', 'ping')).toMatchObject({ ok: true, data: 'pong' });
    await client.close();
  });
});

describe('fuzz over UDP', () => {
  const driver = udpDriver();
  beforeAll(() => driver.start(stack));
  afterAll(() => driver.stop());

  it('answers a flood of a rate-limited gate from one sender: the limit passes, the rest is rate_limited', () => floodLimitedGate(driver));

  it('handles every hostile datagram through its message handler, then real bursts, and keeps serving', async () => {
    const peer = createSocket('udp4');
    let received = 0;
    peer.on('message', () => received++);
    await new Promise<void>((resolve) => peer.bind(0, '127.0.0.1', () => resolve()));
    const { port } = peer.address();
    const transport = driver.transport();
    for (const [i, input] of inputs.entries()) {
      transport.socket.emit('message', input.bytes, { address: '127.0.0.1', family: 'IPv4', port, size: input.bytes.length });
      if (i % 50 === 49) await sleep(1);
    }
    for (let i = 0; i < 2000; i += 100) {
      for (const input of inputs.slice(i, i + 100)) peer.send(input.bytes, driver.port(), '127.0.0.1');
      await sleep(5);
    }
    await quiesce(() => received);
    const dropped = transport.dropped;
    expect(dropped.garbage).toBeGreaterThan(1000);
    expect(received).toBeGreaterThan(0);
    const client = await driver.connect(await stack.session('fuzzer'));
    expect(await client.request('/game', 'move', { x: 3, y: 4 })).toMatchObject({ ok: true, data: { x: 3, y: 4, by: 'fuzzer' } });
    await client.close();
    await new Promise<void>((resolve) => peer.close(() => resolve()));
  });
});

describe('fuzz over authenticated UDP', () => {
  const driver = udpDriver();
  beforeAll(() => driver.start(stack));
  afterAll(() => driver.stop());

  it('drops or answers every hostile authenticated datagram, seals every reply, keeps one window, and keeps serving', async () => {
    const session = await stack.sessions.upgrade(stack.jwt('sealed-fuzzer'));
    const peer = await macPeer(driver.port(), session);
    const transport = driver.transport();
    const random = seededRandom(SEED ^ 0x01);
    const int = (n: number) => Math.floor(random() * n);
    let seq = 1_000n;
    const hostile = inputs.map((input) => {
      const sealed = seal(peer.sid, peer.key, seq++, { id: 1, portal: '/game', gate: 'ping' });
      switch (int(6)) {
        case 0: return sealBytes(peer.sid, peer.key, seq++, input.bytes); // a hostile body, sealed: it reaches the request parser
        case 1: return Buffer.concat([sealed.subarray(0, 25), input.bytes, Buffer.alloc(16)]); // a hostile body, no MAC
        case 2: return sealed.subarray(0, int(sealed.length)); // cut short
        case 3: { const copy = Buffer.from(sealed); copy[1 + int(copy.length - 1)] = int(256); return copy; } // a byte changed
        case 4: return Buffer.concat([Buffer.from([1]), input.bytes]); // a made-up sid and MAC
        default: return seal(peer.sid, peer.key, BigInt(int(2_000)), { id: int(1000), portal: '/game', gate: 'ping' }); // old numbers, replays
      }
    });
    for (const [i, bytes] of hostile.entries()) {
      transport.socket.emit('message', bytes, { address: '127.0.0.1', family: 'IPv4', port: peer.port, size: bytes.length });
      if (i % 50 === 49) await sleep(1);
    }
    for (let i = 0; i < 2000; i += 100) {
      for (const bytes of hostile.slice(i, i + 100)) await peer.send(bytes);
      await sleep(5);
    }
    await quiesce(() => peer.received.length);
    expect(transport.dropped.mac).toBeGreaterThan(1000);
    expect(transport.dropped.replay).toBeGreaterThan(100);
    expect(peer.received.length).toBeGreaterThan(0);
    expect(transport.replayWindows).toBe(1);
    for (const reply of peer.received) {
      const parts = readUdpDatagram(reply);
      expect(parts !== undefined && udpMacMatches(peer.key, parts.signed, parts.mac)).toBe(true);
    }
    await peer.send(peer.seal({ id: 424242, portal: '/game', gate: 'move', data: { x: 3, y: 4 } }, 1n << 62n));
    expect((await peer.reply(424242)).reply).toMatchObject({ ok: true, data: { x: 3, y: 4, by: 'sealed-fuzzer' } });
    await peer.close();
  });
});

describe('after the fuzz', () => {
  it('no exception or rejection escaped', () => {
    expect(escaped).toEqual([]);
  });
});
