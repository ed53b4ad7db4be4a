/**
 * What each transport adds around the shared protocol: the WebSocket upgrade
 * (401 before 101, auth frame for header-less clients, path, deflate, heartbeat,
 * slow readers), the TCP handshake rules, and UDP's size and amplification limits.
 */
import { createSocket } from 'node:dgram';
import { createServer } from 'node:http';
import { connect as netConnect, type AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { encodeFrame, FrameDecoder, parseJsonFrame } from '@portcullis/protocol';
import { attachWebSocketTransport } from '@portcullis/ws';
import WebSocket from 'ws';
import { createMemoryTestStack, type TestStack } from '@portcullis/core/testing';
import { Inbox } from './support/inbox.js';
import { TestGamePortal } from './support/test-portal.js';
import { ConnectRefused, pushUntilDropped, tcpDriver, udpDriver, wsDriver } from './support/transport-drivers.js';

let stack: TestStack;
beforeEach(async () => {
  stack = await createMemoryTestStack({ portals: [TestGamePortal] });
});
afterEach(async () => {
  await stack.close();
});

function upgradeResponse(url: string, headers: Record<string, string>): Promise<{ status: number; headers: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, { headers });
    socket.on('unexpected-response', (_req, res) => {
      resolve({ status: res.statusCode ?? 0, headers: res.headers });
      res.resume();
      socket.terminate();
    });
    socket.on('open', () => reject(new Error('the upgrade was accepted')));
    socket.on('error', () => {});
  });
}

describe('WebSocket upgrade and auth frame', () => {
  const driver = wsDriver();
  afterEach(() => driver.stop());

  describe('with defaults', () => {
    beforeEach(() => driver.start(stack));

    it('refuses a bad bearer credential with HTTP 401 and a Bearer challenge, never 101', async () => {
      for (const authorization of ['Bearer not-a-token', 'Basic dXNlcjpwdw==', 'Bearer ', `Bearer ${'0'.repeat(36)};session`]) {
        const res = await upgradeResponse(driver.url(), { Authorization: authorization });
        expect(res.status).toBe(401);
        expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
      }
    });

    it('refuses a revoked session token before the upgrade', async () => {
      const token = await stack.session('rita');
      await stack.sessions.revoke(token);
      await expect(driver.connect(token)).rejects.toEqual(new ConnectRefused({ status: 401 }));
    });

    it('authenticates a header-less connection with the auth frame', async () => {
      const { client, answer } = await driver.connectWithAuthFrame(await stack.session('sam'));
      expect(answer).toEqual({ type: 'auth', ok: true });
      expect(await client.request('/game', 'move', { x: 1, y: 2 })).toMatchObject({ ok: true, data: { by: 'sam' } });
      await client.close();
    });

    it('answers an invalid auth frame with ok:false and closes with 4401', async () => {
      const { client, answer } = await driver.connectWithAuthFrame('forged.jwt.value');
      expect(answer).toEqual({ type: 'auth', ok: false, error: { code: 'unauthorized', message: expect.any(String) } });
      expect(await client.closed).toEqual({ code: 4401 });
    });

    it('serves a header-less connection anonymously, with or without an auth frame of token null', async () => {
      const { client, answer } = await driver.connectWithAuthFrame(null);
      expect(answer).toEqual({ type: 'auth', ok: true });
      expect(await client.request('/game', 'move', { x: 1, y: 1 })).toMatchObject({ error: { code: 'unauthorized' } });
      const plain = await driver.connect();
      expect(await plain.request('/game', 'ping')).toMatchObject({ ok: true, data: 'pong' });
      await Promise.all([client.close(), plain.close()]);
    });

    it('does not negotiate permessage-deflate by default', async () => {
      const socket = new WebSocket(driver.url(), { perMessageDeflate: true });
      await new Promise((resolve) => socket.once('open', resolve));
      expect(socket.extensions).toBe('');
      socket.close();
    });

    it('pushes a frame to every connection of a principal', async () => {
      const client = await driver.connect(await stack.session('uma'));
      expect(stack.registry.sendToPrincipal('uma', { type: 'event', data: 'match found' })).toBe(1);
      expect(await client.inbox.take()).toEqual({ type: 'event', data: 'match found' });
      await client.close();
    });
  });

  it('answers 404 for another path when nothing else handles upgrades, and leaves it to other listeners', async () => {
    const server = createServer();
    const transport = attachWebSocketTransport(server, { dispatcher: stack.dispatcher, registry: stack.registry });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    const base = `ws://127.0.0.1:${(server.address() as AddressInfo).port}`;
    expect((await upgradeResponse(`${base}/other`, {})).status).toBe(404);
    const seen: string[] = [];
    server.on('upgrade', (req, socket) => {
      seen.push(req.url ?? '');
      socket.end('HTTP/1.1 418 I am a teapot\r\nContent-Length: 0\r\n\r\n');
    });
    expect((await upgradeResponse(`${base}/other`, {})).status).toBe(418);
    expect(seen).toEqual(['/other']);
    await transport.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('drops a peer that stops answering pings', async () => {
    await driver.start(stack, { ws: { heartbeatIntervalMs: 40 } });
    const silent = new WebSocket(driver.url(), { autoPong: false });
    const closed = new Promise<number>((resolve) => silent.on('close', (code) => resolve(code)));
    await new Promise((resolve) => silent.once('open', resolve));
    const alive = await driver.connect();
    expect(await closed).toBe(1006);
    expect(await alive.request('/game', 'ping')).toMatchObject({ ok: true });
    expect(driver.transport().connectionCount).toBe(1);
    await alive.close();
  });

  it('drops a client that does not read what it is sent', async () => {
    await driver.start(stack, { ws: { maxBufferedBytes: 256 * 1024 } });
    const socket = new WebSocket(driver.url(), { headers: { Authorization: `Bearer ${await stack.session('slow')}` } });
    socket.on('error', () => {});
    await new Promise((resolve) => socket.once('open', resolve));
    (socket as unknown as { _socket: { pause(): void } })._socket.pause();
    await pushUntilDropped(stack, 'slow', driver.transport());
    socket.terminate();
  });
});

describe('TCP handshake', () => {
  const driver = tcpDriver();
  beforeEach(() => driver.start(stack));
  afterEach(() => driver.stop());

  function raw() {
    const socket = netConnect({ port: driver.port(), host: '127.0.0.1' });
    const inbox = new Inbox();
    const decoder = new FrameDecoder();
    socket.on('data', (chunk) => decoder.push(chunk).forEach((f) => inbox.push(parseJsonFrame(f))));
    socket.on('error', () => {});
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    return { socket, inbox, closed };
  }

  it.each([
    ['malformed JSON', encodeFrame('{"type":"auth",')],
    ['a request instead of the auth frame', encodeFrame(JSON.stringify({ id: 1, portal: '/game', gate: 'ping' }))],
    ['an auth frame without a token member', encodeFrame(JSON.stringify({ type: 'auth' }))],
    ['an oversized first frame', encodeFrame('x'.repeat(64 * 1024 + 1))],
  ])('closes without a reply when the first frame is %s', async (_what, frame) => {
    const { socket, inbox, closed } = raw();
    socket.write(frame);
    await closed;
    expect(inbox.all).toEqual([]);
  });

  it('answers an invalid token with ok:false, then closes', async () => {
    const { socket, inbox, closed } = raw();
    socket.write(encodeFrame(JSON.stringify({ type: 'auth', token: `${'1'.repeat(8)}-1111-4111-8111-${'1'.repeat(12)};session` })));
    await closed;
    expect(inbox.all).toEqual([{ type: 'auth', ok: false, error: { code: 'unauthorized', message: expect.any(String) } }]);
  });

  it('reassembles frames that arrive one byte at a time', async () => {
    const { socket, inbox } = raw();
    const bytes = Buffer.concat([encodeFrame(JSON.stringify({ type: 'auth', token: null })), encodeFrame(JSON.stringify({ id: 9, portal: '/game', gate: 'ping' }))]);
    for (const byte of bytes) {
      socket.write(Buffer.from([byte]));
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(await inbox.take()).toEqual({ type: 'auth', ok: true });
    expect(await inbox.take()).toEqual({ id: 9, ok: true, data: 'pong' });
    socket.destroy();
  });

  it('pushes a frame to a principal connected over TCP', async () => {
    const client = await driver.connect(stack.jwt('victor'));
    expect(stack.registry.sendToPrincipal('victor', { type: 'event', data: 1 })).toBe(1);
    expect(await client.inbox.take()).toEqual({ type: 'event', data: 1 });
    await client.close();
  });
});

describe('UDP limits', () => {
  const driver = udpDriver();
  beforeEach(() => driver.start(stack));
  afterEach(() => driver.stop());

  async function exchange(message: string): Promise<Inbox> {
    const socket = createSocket('udp4');
    const inbox = new Inbox();
    socket.on('message', (m) => inbox.push(JSON.parse(m.toString())));
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', () => resolve()));
    socket.send(message, driver.port(), '127.0.0.1');
    await inbox.quietFor(100);
    socket.close();
    return inbox;
  }

  it('drops a datagram over 1,200 bytes and answers one of exactly 1,200', async () => {
    const frame = (size: number) => {
      const bare = JSON.stringify({ id: 3, portal: '/game', gate: 'ping', pad: '' });
      return JSON.stringify({ id: 3, portal: '/game', gate: 'ping', pad: 'p'.repeat(size - bare.length) });
    };
    expect((await exchange(frame(1201))).all).toEqual([]);
    expect(driver.transport().dropped.oversized).toBe(1);
    expect((await exchange(frame(1200))).all).toEqual([{ id: 3, ok: true, data: 'pong' }]);
  });

  it('never answers an unauthenticated sender with more bytes than it sent', async () => {
    const small = JSON.stringify({ id: 4, portal: '/game', gate: 'news' });
    expect((await exchange(small)).all).toEqual([]);
    expect(driver.transport().dropped.amplification).toBe(1);
    const unknown = JSON.stringify({ id: 5, portal: '/game', gate: 'nope', pad: 'x'.repeat(15) });
    const terse = await exchange(unknown);
    expect(terse.all).toEqual([{ id: 5, ok: false, error: { code: 'not_found', message: '' } }]);
    expect(JSON.stringify(terse.all[0]).length).toBeLessThanOrEqual(unknown.length);
  });

  it('keeps the budget for a JSON sender whose token authenticates: anyone can sign up for a token and spoof a victim\'s address', async () => {
    const inbox = await exchange(JSON.stringify({ id: 6, portal: '/game', gate: 'news', token: await stack.session('walt') }));
    expect(inbox.all).toEqual([]);
    expect(driver.transport().dropped.amplification).toBe(1);
  });
});
