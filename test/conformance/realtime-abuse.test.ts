/**
 * Abuse cases: each one must leave the process serving. Oversized WebSocket
 * frame, a 50 MB TCP length prefix, a TCP connection that never authenticates,
 * 1,000 garbage datagrams, and 200 pipelined requests answered in order.
 */
import { createSocket } from 'node:dgram';
import { connect as netConnect } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { encodeFrame, FrameDecoder, parseJsonFrame } from '@portcullis/protocol';
import WebSocket from 'ws';
import { createMemoryTestStack, type TestStack } from '@portcullis/core/testing';
import { byId, Inbox } from './support/inbox.js';
import { TestGamePortal } from './support/test-portal.js';
import { tcpDriver, udpDriver, wsDriver } from './support/transport-drivers.js';

let stack: TestStack;
beforeEach(async () => {
  stack = await createMemoryTestStack({ portals: [TestGamePortal] });
});
afterEach(async () => {
  await stack.close();
});

function rawTcp(port: number) {
  const socket = netConnect({ port, host: '127.0.0.1' });
  socket.on('error', () => {});
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  const received: Buffer[] = [];
  socket.on('data', (chunk) => received.push(chunk));
  return { socket, closed, received };
}

describe('WebSocket abuse', () => {
  const driver = wsDriver();
  beforeEach(() => driver.start(stack));
  afterEach(() => driver.stop());

  it('closes a connection that sends a frame over maxPayload with 1009, and keeps serving', async () => {
    const client = await driver.connect();
    client.sendRaw('x'.repeat(64 * 1024 + 1));
    expect(await client.closed).toEqual({ code: 1009 });
    const next = await driver.connect();
    expect(await next.request('/game', 'ping')).toMatchObject({ ok: true, data: 'pong' });
    await next.close();
  });

  it('answers 200 pipelined requests on one socket in order', async () => {
    const socket = new WebSocket(driver.url(), { headers: { Authorization: `Bearer ${await stack.session('pip')}` } });
    const ids: number[] = [];
    const all = new Promise<void>((resolve) =>
      socket.on('message', (data) => {
        ids.push(JSON.parse(data.toString()).id);
        if (ids.length === 200) resolve();
      }),
    );
    await new Promise((resolve) => socket.once('open', resolve));
    for (let id = 1; id <= 200; id++) socket.send(JSON.stringify({ id, portal: '/game', gate: id % 2 ? 'move' : 'ping', data: { x: id, y: id } }));
    await all;
    expect(ids).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
    socket.close();
  });
});

describe('TCP abuse', () => {
  const driver = tcpDriver();
  beforeEach(() => driver.start(stack, { tcp: { authTimeoutMs: 150 } }));
  afterEach(() => driver.stop());

  it('closes a connection announcing a 50 MB frame at once, without buffering it, and keeps serving', async () => {
    const { socket, closed } = rawTcp(driver.port());
    const prefix = Buffer.alloc(4);
    prefix.writeUInt32BE(50 * 1024 * 1024, 0);
    socket.write(prefix);
    socket.write(Buffer.alloc(32 * 1024, 0x20));
    await closed;
    const client = await driver.connect();
    expect(await client.request('/game', 'ping')).toMatchObject({ ok: true, data: 'pong' });
    await client.close();
  });

  it('closes a connection whose later frame announces 50 MB, and keeps serving', async () => {
    const { socket, closed, received } = rawTcp(driver.port());
    socket.write(encodeFrame(JSON.stringify({ type: 'auth', token: null })));
    await expect.poll(() => Buffer.concat(received).subarray(4).toString()).toBe('{"type":"auth","ok":true}');
    const prefix = Buffer.alloc(4);
    prefix.writeUInt32BE(50 * 1024 * 1024, 0);
    socket.write(prefix);
    await closed;
    const client = await driver.connect();
    expect(await client.request('/game', 'ping')).toMatchObject({ ok: true });
    await client.close();
  });

  it('closes a connection that never sends its auth frame, after the deadline, and keeps serving', async () => {
    const { closed, received } = rawTcp(driver.port());
    const started = Date.now();
    await closed;
    expect(Date.now() - started).toBeGreaterThanOrEqual(100);
    expect(received).toEqual([]);
    const client = await driver.connect();
    expect(await client.request('/game', 'ping')).toMatchObject({ ok: true, data: 'pong' });
    await client.close();
  });

  it('answers 200 pipelined requests, written in one burst, in order', async () => {
    const { socket } = rawTcp(driver.port());
    const inbox = new Inbox();
    const decoder = new FrameDecoder();
    socket.on('data', (chunk) => decoder.push(chunk).forEach((f) => inbox.push(parseJsonFrame(f))));
    const token = await stack.session('pip');
    const burst = [encodeFrame(JSON.stringify({ type: 'auth', token }))];
    for (let id = 1; id <= 200; id++) burst.push(encodeFrame(JSON.stringify({ id, portal: '/game', gate: id % 2 ? 'move' : 'ping', data: { x: id, y: 0 } })));
    socket.write(Buffer.concat(burst));
    expect(await inbox.take()).toEqual({ type: 'auth', ok: true });
    await inbox.take(byId(200));
    const ids = inbox.all.slice(1).map((f) => (f as { id: number }).id);
    expect(ids).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
    expect(inbox.all[1]).toMatchObject({ ok: true, data: { x: 1, y: 0, by: 'pip' } });
    socket.destroy();
  });
});

describe('UDP abuse', () => {
  const driver = udpDriver();
  beforeEach(() => driver.start(stack));
  afterEach(() => driver.stop());

  it('ignores 1,000 garbage datagrams without a reply and keeps serving', async () => {
    const attacker = createSocket('udp4');
    const replies: Buffer[] = [];
    attacker.on('message', (m) => replies.push(m));
    await new Promise<void>((resolve) => attacker.bind(0, '127.0.0.1', () => resolve()));
    const garbage = [Buffer.from('not json'), Buffer.from('[1,2]'), Buffer.from('{"id":"x"}'), Buffer.from([0xff, 0xfe, 0x00]), Buffer.from('null')];
    // Paced in bursts of 50: a kernel receive buffer drops a larger instant burst before the server sees it.
    for (let burst = 0; burst < 20; burst++) {
      for (let i = 0; i < 50; i++) attacker.send(garbage[i % garbage.length]!, driver.port(), '127.0.0.1');
      await expect.poll(() => driver.transport().dropped.garbage, { timeout: 3000, interval: 5 }).toBe((burst + 1) * 50);
    }
    expect(replies).toEqual([]);
    const client = await driver.connect();
    expect(await client.request('/game', 'ping')).toMatchObject({ ok: true, data: 'pong' });
    await client.close();
    await new Promise<void>((resolve) => attacker.close(() => resolve()));
  });
});

