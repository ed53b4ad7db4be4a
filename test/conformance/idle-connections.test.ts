/**
 * Connections that hold a socket without authenticating: a WebSocket opened
 * without `Authorization` that never sends its auth frame, anonymous connections
 * that go quiet (answering pings, or stuck on half a frame), many connections from
 * one address waiting to authenticate at once, and an upgrade with two
 * `Authorization` headers. Deadlines are configured small, so nothing waits long.
 */
import { connect as netConnect } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { encodeFrame } from '@portcullis/protocol';
import WebSocket from 'ws';
import { createMemoryTestStack, type TestStack } from '@portcullis/core/testing';
import { TestGamePortal } from './support/test-portal.js';
import { ConnectRefused, tcpDriver, wsDriver } from './support/transport-drivers.js';

let stack: TestStack;
beforeEach(async () => {
  stack = await createMemoryTestStack({ portals: [TestGamePortal] });
});
afterEach(async () => {
  await stack.close();
});

const LIMITS = { authTimeoutMs: 200, anonymousIdleTimeoutMs: 300, maxAwaitingAuthPerAddress: 4 };

/** A raw WebSocket without Authorization; resolves once open. Its `closed` gives the close code. */
async function bareWs(url: string, headers: Record<string, string | string[]> = {}) {
  const socket = new WebSocket(url, { headers, autoPong: true });
  const closed = new Promise<number>((resolve) => socket.once('close', (code) => resolve(code)));
  const opened = new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('unexpected-response', (_req, res) => reject(new ConnectRefused({ status: res.statusCode })));
    socket.once('error', reject);
  });
  await opened;
  return { socket, closed };
}

function rawTcp(port: number) {
  const socket = netConnect({ port, host: '127.0.0.1' });
  socket.on('error', () => {});
  socket.resume(); // read (and drop) the replies, so the server's FIN is seen
  const closed = new Promise<number>((resolve) => {
    const started = Date.now();
    socket.on('close', () => resolve(Date.now() - started));
  });
  const connected = new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  return { socket, closed, connected };
}

/** Resolves with 'open' when `closed` has not settled within `ms`. */
const stillOpenAfter = (closed: Promise<unknown>, ms: number) => Promise.race([closed.then(() => 'closed'), new Promise((resolve) => setTimeout(() => resolve('open'), ms))]);

describe('WebSocket: idle and waiting connections', () => {
  const driver = wsDriver();
  beforeEach(() => driver.start(stack, { ws: LIMITS }));
  afterEach(() => driver.stop());

  it('closes a connection without Authorization that sends no auth frame within the deadline, with 4401', async () => {
    const { closed } = await bareWs(driver.url());
    const started = Date.now();
    expect(await Promise.race([closed, new Promise((resolve) => setTimeout(() => resolve('still open'), 2000))])).toBe(4401);
    expect(Date.now() - started).toBeGreaterThanOrEqual(150);
  });

  it('closes an anonymous connection that goes quiet though it answers pings; a talking one stays', async () => {
    const quiet = await bareWs(driver.url());
    quiet.socket.send(JSON.stringify({ type: 'auth', token: null }));
    const talking = await bareWs(driver.url());
    talking.socket.send(JSON.stringify({ type: 'auth', token: null }));
    const chatter = setInterval(() => talking.socket.send(JSON.stringify({ id: 1, portal: '/game', gate: 'ping' })), 50);
    try {
      expect(await Promise.race([quiet.closed, new Promise((resolve) => setTimeout(() => resolve('still open'), 2000))])).toBe(4401);
      expect(await stillOpenAfter(talking.closed, 400)).toBe('open');
    } finally {
      clearInterval(chatter);
      talking.socket.close();
    }
  });

  it('refuses the upgrade (429) past 4 connections from one address waiting to authenticate, and takes one again once a slot frees', async () => {
    const waiting = await Promise.all(Array.from({ length: 4 }, () => bareWs(driver.url())));
    await expect(bareWs(driver.url())).rejects.toMatchObject({ detail: { status: 429 } });
    // A Bearer upgrade does not wait, so it is not counted.
    const client = await driver.connect(await stack.session('capped'));
    expect(await client.request('/game', 'ping')).toMatchObject({ ok: true });
    waiting[0]!.socket.send(JSON.stringify({ type: 'auth', token: await stack.session('slot') }));
    await expect.poll(async () => {
      try {
        const next = await bareWs(driver.url());
        next.socket.close();
        return 'accepted';
      } catch {
        return 'refused';
      }
    }, { timeout: 2000, interval: 20 }).toBe('accepted');
    await client.close();
    for (const w of waiting) w.socket.close();
  });

  it('refuses an upgrade with two Authorization headers with 401, whichever is valid', async () => {
    const token = await stack.session('two-headers');
    await expect(bareWs(driver.url(), { Authorization: [`Bearer ${token}`, 'Bearer forged'] })).rejects.toMatchObject({ detail: { status: 401 } });
    await expect(bareWs(driver.url(), { Authorization: ['Bearer forged', `Bearer ${token}`] })).rejects.toMatchObject({ detail: { status: 401 } });
  });
});

describe('TCP: idle and waiting connections', () => {
  const driver = tcpDriver();
  beforeEach(() => driver.start(stack, { tcp: LIMITS }));
  afterEach(() => driver.stop());

  it('closes an anonymous connection (token: null) that then sends nothing', async () => {
    const { socket, closed } = rawTcp(driver.port());
    socket.write(encodeFrame(JSON.stringify({ type: 'auth', token: null })));
    expect(await Promise.race([closed, new Promise((resolve) => setTimeout(() => resolve('still open'), 3000))])).toBeGreaterThanOrEqual(250);
  });

  it('closes an anonymous connection stuck on half a 64 KiB frame', async () => {
    const { socket, closed } = rawTcp(driver.port());
    socket.write(encodeFrame(JSON.stringify({ type: 'auth', token: null })));
    const prefix = Buffer.alloc(4);
    prefix.writeUInt32BE(64 * 1024, 0);
    socket.write(Buffer.concat([prefix, Buffer.alloc(32 * 1024, 0x20)]));
    expect(await Promise.race([closed, new Promise((resolve) => setTimeout(() => resolve('still open'), 3000))])).toBeGreaterThanOrEqual(250);
  });

  it('closes at once a fifth connection from one address while 4 wait to authenticate', async () => {
    await driver.stop();
    await driver.start(stack, { tcp: { ...LIMITS, authTimeoutMs: 5000 } });
    const waiting = Array.from({ length: 4 }, () => rawTcp(driver.port()));
    await Promise.all(waiting.map((w) => w.connected));
    await expect.poll(() => driver.transport().connectionCount).toBe(4);
    const fifth = rawTcp(driver.port());
    expect(await Promise.race([fifth.closed, new Promise((resolve) => setTimeout(() => resolve('still open'), 1000))])).toBeLessThan(1000);
    // A connection that goes away frees its slot.
    waiting[0]!.socket.destroy();
    await expect.poll(() => driver.transport().connectionCount).toBe(3);
    const client = await driver.connect(await stack.session('tcp-slot'));
    expect(await client.request('/game', 'ping')).toMatchObject({ ok: true });
    await client.close();
    for (const w of waiting) w.socket.destroy();
  });
});
