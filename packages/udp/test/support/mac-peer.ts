/**
 * A raw UDP peer for the authenticated form: seals requests with a session's key
 * and sequence numbers it chooses, sends any bytes, and opens sealed replies.
 */
import { createSocket } from 'node:dgram';
import { udpSessionId } from '@portcullis/core';
import { udpMac } from '@portcullis/core/transport';
import { layUdpDatagram, readUdpDatagram, UDP_MAC_BYTES, type UdpDatagramParts } from '@portcullis/protocol';
import { expect } from 'vitest';

export interface SealedReply {
  readonly parts: UdpDatagramParts;
  /** True when the MAC checks out under the peer's key. */
  readonly authentic: boolean;
  readonly reply: Record<string, unknown>;
}

export function seal(sid: Uint8Array, key: Uint8Array, seq: bigint, request: unknown): Buffer {
  return sealBytes(sid, key, seq, Buffer.from(JSON.stringify(request), 'utf8'));
}

export function sealBytes(sid: Uint8Array, key: Uint8Array, seq: bigint, body: Uint8Array): Buffer {
  const datagram = layUdpDatagram(sid, seq, body);
  const macAt = datagram.length - UDP_MAC_BYTES;
  datagram.set(udpMac(key, datagram.subarray(0, macAt)), macAt);
  return Buffer.from(datagram);
}

export async function macPeer(port: number, session: { accessToken: string; udpKey?: string | undefined }) {
  if (session.udpKey === undefined) throw new Error('the session came without a udpKey');
  const socket = createSocket('udp4');
  const received: Buffer[] = [];
  socket.on('message', (message) => received.push(message));
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', () => resolve()));
  const sid = udpSessionId(session.accessToken);
  const key = Buffer.from(session.udpKey, 'base64url');
  let seq = 1n;
  const open = (message: Buffer): SealedReply => {
    const parts = readUdpDatagram(message);
    expect(parts, 'a reply in the authenticated form').toBeDefined();
    const mac = udpMac(key, parts!.signed);
    return { parts: parts!, authentic: mac.equals(parts!.mac), reply: JSON.parse(Buffer.from(parts!.body).toString('utf8')) };
  };
  return {
    sid,
    key,
    received,
    /** The peer's own port, where replies arrive. */
    port: socket.address().port,
    seal: (request: unknown, at = seq++) => seal(sid, key, at, request),
    send: (bytes: Uint8Array) => new Promise<void>((resolve) => socket.send(bytes, port, '127.0.0.1', () => resolve())),
    open,
    /** Waits for the reply to `id`. */
    async reply(id: number): Promise<SealedReply> {
      let found: SealedReply | undefined;
      await expect
        .poll(() => (found = received.map(open).find((r) => r.reply.id === id)), { timeout: 3000, interval: 5 })
        .toBeDefined();
      return found!;
    },
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}

export type MacPeer = Awaited<ReturnType<typeof macPeer>>;

/** Lets datagrams in flight land: a UDP "nothing came back" needs a short wait after the last send. */
export function settle(ms = 150): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
