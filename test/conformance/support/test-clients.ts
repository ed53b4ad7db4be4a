/**
 * Minimal clients of the three transports, as a client in another language would
 * write them from docs/protocol.md: `request` sends `{id, portal, gate, data}` and
 * waits for the reply with that id.
 */
import { createSocket } from 'node:dgram';
import { connect as netConnect } from 'node:net';
import { encodeFrame, FrameDecoder } from '@portcullis/protocol';
import WebSocket from 'ws';
import { byId, Inbox, type Reply } from './inbox.js';

/** How a connection ended: WebSocket close code, or `end` for a TCP FIN/reset. */
export interface Closed {
  readonly code: number | 'end';
}

export interface RealtimeClient {
  readonly inbox: Inbox;
  /** Sends `{id, portal, gate, data}` (plus `token` over UDP) and waits for its reply. */
  request(portal: string, gate: string, data?: unknown, timeoutMs?: number): Promise<Reply>;
  /** Sends one message as is (raw text or bytes; framed on TCP). */
  sendRaw(message: string | Buffer): void;
  /** Resolves when the server closes the connection; never for UDP. */
  readonly closed: Promise<Closed>;
  close(): Promise<void>;
}

/** Thrown by a connect function when the server refuses the credential. */
export class ConnectRefused extends Error {
  constructor(readonly detail: { status?: number; frame?: unknown }) {
    super(`connection refused: ${JSON.stringify(detail)}`);
  }
}

let nextId = 1;
const utf8 = new TextDecoder();

/** Opens a WebSocket; with a token, as `Authorization: Bearer`. */
export async function connectWs(url: string, token?: string): Promise<RealtimeClient> {
  const socket = new WebSocket(url, { headers: token === undefined ? {} : { Authorization: `Bearer ${token}` } });
  const inbox = new Inbox();
  const closed = new Promise<Closed>((resolve) => socket.on('close', (code) => resolve({ code })));
  socket.on('message', (data) => inbox.push(parse(data.toString())));
  socket.on('error', () => {});
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('unexpected-response', (_req, res) => reject(new ConnectRefused({ status: res.statusCode })));
    socket.once('error', reject);
  });
  return {
    inbox,
    closed,
    async request(portal, gate, data, timeoutMs) {
      const id = nextId++;
      socket.send(JSON.stringify({ id, portal, gate, data }));
      return (await inbox.take(byId(id), timeoutMs)) as Reply;
    },
    sendRaw: (message) => socket.send(message),
    async close() {
      if (socket.readyState === WebSocket.CLOSED) return;
      socket.close();
      await closed;
    },
  };
}

/** Connects over TCP and sends the auth frame (`token: null` when none); rejects when refused. */
export async function connectTcp(port: number, token?: string): Promise<RealtimeClient> {
  const socket = netConnect({ port, host: '127.0.0.1' });
  const inbox = new Inbox();
  const decoder = new FrameDecoder({ maxFrameBytes: 1 << 30 });
  const closed = new Promise<Closed>((resolve) => socket.on('close', () => resolve({ code: 'end' })));
  socket.on('data', (chunk) => decoder.push(chunk).forEach((body) => inbox.push(parse(utf8.decode(body)))));
  socket.on('error', () => {});
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  socket.write(encodeFrame(JSON.stringify({ type: 'auth', token: token ?? null })));
  const answer = (await inbox.take((f) => (f as { type?: string }).type === 'auth')) as { ok: boolean };
  if (!answer.ok) throw new ConnectRefused({ frame: answer });
  return {
    inbox,
    closed,
    async request(portal, gate, data, timeoutMs) {
      const id = nextId++;
      socket.write(encodeFrame(JSON.stringify({ id, portal, gate, data })));
      return (await inbox.take(byId(id), timeoutMs)) as Reply;
    },
    sendRaw: (message) => socket.write(encodeFrame(message)),
    async close() {
      if (socket.destroyed) return;
      socket.end();
      await closed;
    },
  };
}

/** UDP requests are padded to this size so even error replies fit the anti-amplification budget. */
export const UDP_PAD_TO = 256;

/** A UDP "client": its own socket; every request carries `token` when given, padded to {@link UDP_PAD_TO}. */
export async function connectUdp(port: number, token?: string): Promise<RealtimeClient> {
  const socket = createSocket('udp4');
  const inbox = new Inbox();
  socket.on('message', (message) => inbox.push(parse(message.toString('utf8'))));
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', () => resolve()));
  const send = (message: string | Buffer) => socket.send(message, port, '127.0.0.1');
  return {
    inbox,
    closed: new Promise<Closed>(() => {}),
    async request(portal, gate, data, timeoutMs) {
      const id = nextId++;
      const frame: Record<string, unknown> = { id, portal, gate, data, ...(token === undefined ? {} : { token }) };
      const bare = JSON.stringify(frame);
      send(JSON.stringify({ ...frame, pad: 'x'.repeat(Math.max(0, UDP_PAD_TO - bare.length)) }));
      return (await inbox.take(byId(id), timeoutMs)) as Reply;
    },
    sendRaw: send,
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return { unparsable: text };
  }
}
