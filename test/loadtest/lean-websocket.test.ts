/**
 * The load generator's WebSocket client speaks RFC 6455 with a real `ws` server: masked
 * frames of every length form, pongs, both closing handshakes, a refused upgrade; and
 * against a raw server, frames split across reads and frames a server must not send.
 */
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocketServer } from 'ws';
import { LeanWebSocket } from '../../loadtest/lib/lean-websocket.js';

const closers: Array<() => Promise<unknown>> = [];

afterEach(async () => {
  while (closers.length > 0) await closers.pop()!();
});

async function wsServer(options: ConstructorParameters<typeof WebSocketServer>[0] = {}): Promise<{ wss: WebSocketServer; url: string }> {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1', ...options });
  await once(wss, 'listening');
  closers.push(() => new Promise((resolve) => (wss.clients.forEach((ws) => ws.terminate()), wss.close(resolve))));
  return { wss, url: `ws://127.0.0.1:${(wss.address() as AddressInfo).port}/ws` };
}

/**
 * A server that answers the handshake itself (with `accept`, default the right one) and
 * then writes `pieces` raw, 15 ms apart; `onData` sees what the client sends after the
 * handshake; `received` is all of it once the connection closed.
 */
async function rawServer(
  pieces: Buffer[],
  { onData, accept }: { onData?: (chunk: Buffer, socket: Socket) => void; accept?: string } = {},
): Promise<{ url: string; received: Promise<Buffer> }> {
  let resolveReceived!: (bytes: Buffer) => void;
  const received = new Promise<Buffer>((resolve) => (resolveReceived = resolve));
  const server: Server = createServer((socket: Socket) => {
    let head = '';
    const chunks: Buffer[] = [];
    socket.on('error', () => {});
    socket.on('data', async (chunk) => {
      if (!head.includes('\r\n\r\n')) {
        head += chunk.toString('latin1');
        if (!head.includes('\r\n\r\n')) return;
        const key = /sec-websocket-key: (.+)\r\n/i.exec(head)![1];
        const right = createHash('sha1').update(`${key}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest('base64');
        socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept ?? right}\r\n\r\n`);
        for (const piece of pieces) {
          await new Promise((resolve) => setTimeout(resolve, 15));
          if (piece.length === 0) socket.end();
          else socket.write(piece);
        }
        return;
      }
      chunks.push(chunk);
      onData?.(chunk, socket);
    });
    socket.on('close', () => resolveReceived(Buffer.concat(chunks)));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  closers.push(() => new Promise((resolve) => server.close(resolve)));
  return { url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}/`, received };
}

function serverFrame(opcode: number, payload: Buffer, { fin = true } = {}): Buffer {
  const first = (fin ? 0x80 : 0) | opcode;
  let head: Buffer;
  if (payload.length < 126) head = Buffer.from([first, payload.length]);
  else if (payload.length < 65536) head = Buffer.from([first, 126, payload.length >> 8, payload.length & 0xff]);
  else (head = Buffer.alloc(10)), (head[0] = first), (head[1] = 127), head.writeBigUInt64BE(BigInt(payload.length), 2);
  return Buffer.concat([head, payload]);
}

function closeFrame(code: number): Buffer {
  const payload = Buffer.alloc(2);
  payload.writeUInt16BE(code);
  return serverFrame(0x8, payload);
}

async function opened(url: string, headers: Record<string, string> = {}): Promise<LeanWebSocket> {
  const ws = new LeanWebSocket(url, { headers });
  await once(ws, 'open');
  return ws;
}

function nextMessage(ws: LeanWebSocket): Promise<string> {
  return once(ws, 'message').then(([data]) => (data as Buffer).toString('utf8'));
}

describe('LeanWebSocket against a ws server', () => {
  it('sends its headers and exchanges messages of each length form, masked as a server requires', async () => {
    const { wss, url } = await wsServer();
    const seenAuth = once(wss, 'connection').then(([socket, req]) => {
      socket.on('message', (data: Buffer) => socket.send(`echo:${data.toString()}`));
      return req.headers.authorization as string;
    });
    const ws = await opened(url, { Authorization: 'Bearer abc;session' });
    expect(await seenAuth).toBe('Bearer abc;session');
    // ws closes the connection (1002) on an unmasked client frame, so each echo proves the masking.
    for (const text of ['hi', 'é'.repeat(100), 'x'.repeat(70_000)]) {
      const reply = nextMessage(ws);
      ws.send(text);
      expect(await reply).toBe(`echo:${text}`);
    }
    expect(ws.readyState).toBe(LeanWebSocket.OPEN);
  });

  it('answers a ping with a pong carrying its payload', async () => {
    const { wss, url } = await wsServer();
    const server = once(wss, 'connection').then(([socket]) => socket);
    await opened(url);
    const socket = await server;
    const pong = once(socket, 'pong');
    socket.ping('beat');
    expect(((await pong)[0] as Buffer).toString()).toBe('beat');
  });

  it('reports the close code a server closes with, and answers the close frame', async () => {
    const { wss, url } = await wsServer();
    const server = once(wss, 'connection').then(([socket]) => socket);
    const ws = await opened(url);
    const socket = await server;
    const serverSawClose = once(socket, 'close');
    const clientClosed = once(ws, 'close');
    socket.close(4401, 'session revoked');
    expect((await clientClosed)[0]).toBe(4401);
    // ws emits close only once its own close frame was answered (or after 30 s).
    expect((await serverSawClose)[0]).toBe(4401);
    expect(ws.readyState).toBe(LeanWebSocket.CLOSED);
  });

  it('closes with 1000 when it closes first', async () => {
    const { wss, url } = await wsServer();
    const server = once(wss, 'connection').then(([socket]) => socket);
    const ws = await opened(url);
    const serverSawClose = once(await server, 'close');
    const clientClosed = once(ws, 'close');
    ws.close();
    expect((await serverSawClose)[0]).toBe(1000);
    expect((await clientClosed)[0]).toBe(1000);
  });

  it('emits unexpected-response when the upgrade is refused, then close', async () => {
    const { url } = await wsServer({ verifyClient: (_info, done) => done(false, 401, 'Unauthorized') });
    const ws = new LeanWebSocket(url);
    const closed = once(ws, 'close');
    const [, res] = await once(ws, 'unexpected-response');
    expect(res.statusCode).toBe(401);
    expect(ws.readyState).toBe(LeanWebSocket.CLOSED);
    expect((await closed)[0]).toBe(1006);
  });

  it('terminated before it opened: error and close 1006, never open', async () => {
    const { url } = await wsServer();
    const ws = new LeanWebSocket(url);
    const events: string[] = [];
    ws.on('open', () => events.push('open'));
    ws.on('error', () => events.push('error'));
    ws.on('close', (code) => events.push(`close ${code}`));
    ws.terminate();
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(events).toEqual(['error', 'close 1006']);
    expect(ws.readyState).toBe(LeanWebSocket.CLOSED);
    ws.terminate();
    expect(ws.readyState).toBe(LeanWebSocket.CLOSED);
  });
});

describe('LeanWebSocket reading raw frames', () => {
  it('reassembles frames split across reads, several per read, and fragmented messages', async () => {
    const frames = Buffer.concat([
      serverFrame(0x1, Buffer.from('first')),
      serverFrame(0x1, Buffer.from('y'.repeat(300))),
      serverFrame(0x1, Buffer.from('frag-'), { fin: false }),
      serverFrame(0x0, Buffer.from('ment')),
    ]);
    // Cut inside the first header, inside the second's 16-bit length (bytes 9 and 10), and inside its payload.
    const { url } = await rawServer([frames.subarray(0, 1), frames.subarray(1, 10), frames.subarray(10, 200), frames.subarray(200)]);
    const ws = new LeanWebSocket(url);
    const messages: string[] = [];
    ws.on('message', (data: Buffer) => messages.push(data.toString()));
    await once(ws, 'open');
    await expect.poll(() => messages.length).toBe(3);
    expect(messages).toEqual(['first', 'y'.repeat(300), 'frag-ment']);
    ws.terminate();
  });

  it('reads a frame whose 64-bit length is cut across reads', async () => {
    const big = serverFrame(0x1, Buffer.alloc(70_000, 'z'));
    const { url } = await rawServer([big.subarray(0, 5), big.subarray(5, 12), big.subarray(12)]);
    const ws = await opened(url);
    expect(await nextMessage(ws)).toBe('z'.repeat(70_000));
    ws.terminate();
  });

  it('reports 1006 when the server drops the connection without a close frame', async () => {
    const { url } = await rawServer([serverFrame(0x1, Buffer.from('bye')), Buffer.alloc(0)]);
    const ws = await opened(url);
    const [code] = await once(ws, 'close');
    expect(code).toBe(1006);
  });

  it('refuses a handshake answer with the wrong Sec-WebSocket-Accept: error, then close 1006', async () => {
    const { url } = await rawServer([], { accept: 'd3Jvbmcgd3Jvbmcgd3Jvbmc=' });
    const ws = new LeanWebSocket(url);
    const events: string[] = [];
    ws.on('open', () => events.push('open'));
    ws.on('error', (error: Error) => events.push(`error ${error.message}`));
    // Not events.once: it rejects on the error event that comes first.
    const code = await new Promise((resolve) => ws.on('close', resolve));
    expect(code).toBe(1006);
    expect(events).toEqual(['error invalid WebSocket handshake answer']);
  });

  it('ends the connection with 1002 on a close code that never goes on the wire', async () => {
    const { url } = await rawServer([closeFrame(1005)]);
    const ws = await opened(url);
    const [code] = await once(ws, 'close');
    expect(code).toBe(1002);
  });

  it('takes a ping that crosses its own close frame without answering it, and closes cleanly', async () => {
    const { url, received } = await rawServer([], {
      // The client's close arrives; the server's heartbeat pings once more, then answers the close.
      onData: (_chunk, socket) => socket.write(Buffer.concat([serverFrame(0x9, Buffer.from('late')), closeFrame(1000)])),
    });
    const ws = await opened(url);
    const closed = once(ws, 'close');
    ws.close();
    expect((await closed)[0]).toBe(1000);
    const bytes = await received;
    expect(bytes.length).toBe(2 + 4 + 2); // its close frame, and no pong after it
    expect(bytes[0]).toBe(0x88);
  });

  it('ends the connection with 1002 on a masked frame from the server, delivering nothing', async () => {
    const masked = Buffer.from([0x81, 0x80 | 2, 1, 2, 3, 4, 'o'.charCodeAt(0) ^ 1, 'k'.charCodeAt(0) ^ 2]);
    const { url } = await rawServer([masked]);
    const ws = new LeanWebSocket(url);
    const messages: unknown[] = [];
    ws.on('message', (data) => messages.push(data));
    const [code] = await once(ws, 'close');
    expect(code).toBe(1002);
    expect(messages).toEqual([]);
  });

  it('masks what it sends with a fresh key per frame', async () => {
    const { url, received } = await rawServer([]);
    const ws = await opened(url);
    ws.send('same');
    ws.send('same');
    await new Promise((resolve) => setTimeout(resolve, 20));
    ws.terminate();
    const bytes = await received;
    expect(bytes.length).toBe(2 * (2 + 4 + 4));
    const [a, b] = [bytes.subarray(0, 10), bytes.subarray(10)];
    for (const frame of [a, b]) {
      expect(frame[0]).toBe(0x81);
      expect(frame[1]).toBe(0x80 | 4);
      const key = frame.subarray(2, 6);
      expect(Buffer.from(frame.subarray(6).map((byte, i) => byte ^ key[i % 4]!)).toString()).toBe('same');
    }
    expect(a.subarray(2, 6).equals(b.subarray(2, 6))).toBe(false);
  });
});
