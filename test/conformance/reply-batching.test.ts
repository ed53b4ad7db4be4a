/**
 * A server that has fallen behind reads several requests of one client at once. Their
 * replies must then leave in one write (one system call), not one each: that is what
 * lets a backlog drain instead of feeding itself. Checked on the server's own sockets,
 * WebSocket and TCP, with the requests sent in one TCP segment.
 */
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { connect, Socket, type AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLoggerFactory } from '@portcullis/core';
import { createMemoryTestStack, type TestStack } from '@portcullis/core/testing';
import { encodeFrame, FrameDecoder } from '@portcullis/protocol';
import { createTcpTransport, type TcpTransport } from '@portcullis/tcp';
import { attachWebSocketTransport, type WebSocketTransport } from '@portcullis/ws';
import { TestGamePortal } from './support/test-portal.js';

const MOVES = 3;
const move = (id: number) => JSON.stringify({ id, portal: '/game', gate: 'move', data: { x: id, y: 1 } });

type Writable = Socket & { _write: (...args: unknown[]) => unknown; _writev: (...args: unknown[]) => unknown };

/**
 * Counts the writes (calls of `_write` and `_writev`, each one system call) of the
 * sockets whose local port is `port`, that is the server's side of its connections.
 */
function countServerWrites(port: number): { writes: () => number; restore: () => void } {
  const proto = Socket.prototype as Writable;
  const { _write, _writev } = proto;
  let writes = 0;
  proto._write = function (this: Socket, ...args: unknown[]) {
    if (this.localPort === port) writes++;
    return _write.apply(this, args);
  };
  proto._writev = function (this: Socket, ...args: unknown[]) {
    if (this.localPort === port) writes++;
    return _writev.apply(this, args);
  };
  return { writes: () => writes, restore: () => Object.assign(proto, { _write, _writev }) };
}

/** A masked client-to-server text frame (RFC 6455 §5.2), for bodies under 126 bytes. */
function maskedTextFrame(text: string): Buffer {
  const body = Buffer.from(text);
  const mask = randomBytes(4);
  const masked = Buffer.from(body.map((byte, i) => byte ^ mask[i % 4]!));
  return Buffer.concat([Buffer.from([0x81, 0x80 | body.length]), mask, masked]);
}

/** Reads until `count` replies arrived; answers them, parsed. */
function awaitReplies(socket: Socket, count: number, split: (chunk: Buffer) => string[]): Promise<unknown[]> {
  const replies: unknown[] = [];
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      for (const text of split(chunk)) replies.push(JSON.parse(text));
      if (replies.length < count) return;
      socket.off('data', onData).off('close', onClose);
      resolve(replies);
    };
    const onClose = () => reject(new Error(`the socket closed after ${replies.length} of ${count} replies`));
    socket.on('data', onData).once('close', onClose);
  });
}

/** Splits unmasked server-to-client WebSocket frames (bodies under 126 bytes) out of a chunk. */
function wsFrames(chunk: Buffer): string[] {
  const texts: string[] = [];
  for (let at = 0; at < chunk.length; ) {
    const length = chunk[at + 1]! & 0x7f;
    texts.push(chunk.toString('utf8', at + 2, at + 2 + length));
    at += 2 + length;
  }
  return texts;
}

/**
 * Sends MOVES requests in one segment and expects their replies, in order, from one
 * server write. Closes the client.
 */
async function expectOneWriteForMoves(port: number, client: Socket, frame: (text: string) => Uint8Array, split: (chunk: Buffer) => string[]): Promise<void> {
  const counter = countServerWrites(port);
  try {
    client.write(Buffer.concat(Array.from({ length: MOVES }, (_, i) => frame(move(i + 1)))));
    const replies = await awaitReplies(client, MOVES, split);
    expect(replies).toEqual(Array.from({ length: MOVES }, (_, i) => ({ id: i + 1, ok: true, data: { x: i + 1, y: 1, by: 'batcher' } })));
    expect(counter.writes()).toBe(1);
  } finally {
    counter.restore();
    client.destroy();
  }
}

let stack: TestStack;
beforeEach(async () => {
  stack = await createMemoryTestStack({ portals: [TestGamePortal] });
});
afterEach(async () => {
  await stack.close();
});

describe('replies to requests read at once leave in one write', () => {
  let server: Server;
  let ws: WebSocketTransport;
  let tcp: TcpTransport;
  afterEach(async () => {
    await ws?.close();
    await tcp?.close();
    if (server?.listening) {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('on WebSocket', async () => {
    server = createServer((_req, res) => res.writeHead(404).end());
    ws = attachWebSocketTransport(server, { loggers: silentLoggerFactory, dispatcher: stack.dispatcher, registry: stack.registry });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    const port = (server.address() as AddressInfo).port;
    const client = connect(port, '127.0.0.1');
    await once(client, 'connect');
    client.write([
      'GET /ws HTTP/1.1', `Host: 127.0.0.1:${port}`, 'Upgrade: websocket', 'Connection: Upgrade',
      `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}`, 'Sec-WebSocket-Version: 13',
      `Authorization: Bearer ${await stack.session('batcher')}`, '', '',
    ].join('\r\n'));
    const [head] = await once(client, 'data');
    expect((head as Buffer).toString('latin1')).toMatch(/^HTTP\/1\.1 101 /);

    await expectOneWriteForMoves(port, client, maskedTextFrame, wsFrames);
  });

  it('on TCP', async () => {
    tcp = createTcpTransport({ loggers: silentLoggerFactory, dispatcher: stack.dispatcher, registry: stack.registry });
    const { port } = await tcp.listen(0, '127.0.0.1');
    const client = connect(port, '127.0.0.1');
    await once(client, 'connect');
    const decoder = new FrameDecoder();
    const tcpFrames = (chunk: Buffer) => decoder.push(chunk).map((body) => Buffer.from(body).toString('utf8'));
    client.write(encodeFrame(JSON.stringify({ type: 'auth', token: await stack.session('batcher') })));
    expect(await awaitReplies(client, 1, tcpFrames)).toEqual([{ type: 'auth', ok: true }]);

    await expectOneWriteForMoves(port, client, encodeFrame, tcpFrames);
  });
});
