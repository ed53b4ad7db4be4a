/**
 * Minimal TCP and UDP clients of the `/game` portal for the soak, written from
 * docs/protocol.md: TCP frames are a 4-byte big-endian length and UTF-8 JSON,
 * the auth frame first; a UDP datagram is one request carrying its `token`.
 * `request` answers the reply with the request's id, or rejects after a timeout.
 */
import { createSocket } from 'node:dgram';
import { connect } from 'node:net';
import { encodeFrame, FrameDecoder, parseJsonFrame } from '@portcullis/protocol';

let nextId = 1;

function replyRouter() {
  const waiting = new Map();
  return {
    expect(id, timeoutMs) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiting.delete(id);
          reject(new Error('no reply'));
        }, timeoutMs);
        waiting.set(id, (reply) => (clearTimeout(timer), resolve(reply)));
      });
    },
    deliver(reply) {
      const resolve = waiting.get(reply?.id);
      if (!resolve) return false;
      waiting.delete(reply.id);
      resolve(reply);
      return true;
    },
  };
}

/** Connects over TCP and authenticates with `token` (null: anonymous); rejects when refused. */
export async function openTcp(port, token) {
  const socket = connect({ port, host: '127.0.0.1' });
  const decoder = new FrameDecoder({ maxFrameBytes: 1 << 20 });
  const router = replyRouter();
  let onAuth;
  const authAnswer = new Promise((resolve) => (onAuth = resolve));
  const closed = new Promise((resolve) => socket.once('close', () => resolve('end')));
  socket.on('error', () => {});
  socket.on('data', (chunk) => {
    for (const body of decoder.push(chunk)) {
      const frame = parseJsonFrame(body);
      if (frame === undefined) continue;
      if (frame.type === 'auth') onAuth(frame);
      else router.deliver(frame);
    }
  });
  await new Promise((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  socket.write(encodeFrame(JSON.stringify({ type: 'auth', token })));
  const answer = await Promise.race([authAnswer, closed.then(() => ({ ok: false }))]);
  if (!answer.ok) {
    socket.destroy();
    throw new Error(`TCP auth refused: ${JSON.stringify(answer.error ?? 'closed')}`);
  }
  return {
    closed,
    request(portal, gate, data, timeoutMs = 5000) {
      const id = nextId++;
      socket.write(encodeFrame(JSON.stringify({ id, portal, gate, data })));
      return router.expect(id, timeoutMs);
    },
    close() {
      socket.end();
      return closed;
    },
  };
}

/** A UDP client on its own socket; every request carries `token` and is padded so replies fit the anti-amplification budget. */
export async function openUdp(port, token) {
  const socket = createSocket('udp4');
  const router = replyRouter();
  socket.on('message', (message) => {
    try {
      router.deliver(JSON.parse(message.toString('utf8')));
    } catch {
      // not a reply
    }
  });
  await new Promise((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return {
    request(portal, gate, data, timeoutMs = 5000) {
      const id = nextId++;
      const frame = { id, portal, gate, data, token };
      const bare = JSON.stringify(frame);
      socket.send(JSON.stringify({ ...frame, pad: 'x'.repeat(Math.max(0, 256 - bare.length)) }), port, '127.0.0.1');
      return router.expect(id, timeoutMs);
    },
    close: () => new Promise((resolve) => socket.close(resolve)),
  };
}
