/**
 * The Node client's UDP transport speaks the authenticated form by default: no
 * token on the wire, so a server that drops bearer datagrams (`requireMac`) still
 * serves it; a session refresh moves it to the new key; and it accepts only replies
 * sealed for its session, each once.
 */
import { createSocket } from 'node:dgram';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UdpKeyring, udpSessionId } from '@portcullis/core';
import { udpMac } from '@portcullis/core/transport';
import { layUdpDatagram, readUdpDatagram, UDP_MAC_BYTES } from '@portcullis/protocol';
import { udpTransport, type InboundFrame } from '../src/node.js';
import { startGameServer, type RunningGameServer } from './support/game-server-harness.js';
import { FAST_RECONNECT, signedUpClient } from './support/signed-up-clients.js';

describe('UDP client against a server that requires authenticated datagrams', () => {
  let server: RunningGameServer;
  beforeAll(async () => { server = await startGameServer({ udpRequireMac: true }); });
  afterAll(async () => { await server?.stop(); });

  it('is served by default: its datagrams carry the sid and a MAC, never the token', async () => {
    const { client } = await signedUpClient(server);
    const conn = await client.connect({ transport: udpTransport({ port: server.udpPort, retryIntervalMs: 50 }), reconnect: FAST_RECONNECT });
    await expect(conn.request('/game', 'move', { x: 1, y: 2 })).resolves.toMatchObject({ x: 1, y: 2 });
    expect(server.udp.dropped.bearer).toBe(0);
    expect(server.udp.replayWindows).toBeGreaterThanOrEqual(1);
    conn.close();
  });

  it('with mac: false sends the token in JSON, which this server drops', async () => {
    const { client } = await signedUpClient(server);
    const before = server.udp.dropped.bearer;
    const conn = await client.connect({ transport: udpTransport({ port: server.udpPort, retryIntervalMs: 50, maxAttempts: 2, mac: false }), reconnect: FAST_RECONNECT });
    await expect(conn.request('/game', 'move', { x: 1, y: 2 }, { timeoutMs: 400 })).rejects.toMatchObject({ code: 'timeout' });
    expect(server.udp.dropped.bearer).toBeGreaterThan(before);
    conn.close();
  });

  it('after a session refresh it moves to the new sid and key, and is still served', async () => {
    const { client } = await signedUpClient(server);
    const conn = await client.connect({ transport: udpTransport({ port: server.udpPort, retryIntervalMs: 50 }), reconnect: FAST_RECONNECT });
    await conn.request('/game', 'move', { x: 1, y: 1 });
    const before = client.tokens.session!;
    const refreshed = await client.refresh();
    expect(refreshed.kind).toBe('session');
    expect(client.tokens.session!.udpKey).toBeDefined();
    expect(client.tokens.session!.udpKey).not.toBe(before.udpKey);
    await expect(conn.request('/game', 'move', { x: 5, y: 6 })).resolves.toMatchObject({ x: 5, y: 6 });
    conn.close();
  });
});

describe('UDP client reply checks', () => {
  const accessToken = '0f8fad5b-d9cb-469f-a165-70867728950e;session';
  const udpKey = new UdpKeyring(Buffer.alloc(32, 3)).udpKeyOf(accessToken);
  const sealReply = (key: Buffer, sid: Uint8Array, seq: bigint, reply: object) => {
    const datagram = layUdpDatagram(sid, seq, Buffer.from(JSON.stringify(reply)));
    datagram.set(udpMac(key, datagram.subarray(0, datagram.length - UDP_MAC_BYTES)), datagram.length - UDP_MAC_BYTES);
    return datagram;
  };

  it('delivers only replies sealed for its session with a new sequence number; forged, unsealed, foreign and replayed ones are ignored', async () => {
    // A server socket that answers each request with a volley of bad replies, then the real one, then a replay of it.
    const fake = createSocket('udp4');
    const key = Buffer.from(udpKey, 'base64url');
    const sid = udpSessionId(accessToken);
    fake.on('message', (message, peer) => {
      const parts = readUdpDatagram(message)!;
      const { id } = JSON.parse(Buffer.from(parts.body).toString()) as { id: number };
      const answer = (bytes: Uint8Array | string) => fake.send(bytes, peer.port, peer.address);
      answer(JSON.stringify({ id, ok: true, data: 'unsealed' }));
      answer(sealReply(Buffer.alloc(32, 9), sid, 10n, { id, ok: true, data: 'wrong key' }));
      answer(sealReply(key, udpSessionId('7c9e6679-7425-40de-944b-e07fc1f90ae7;session'), 11n, { id, ok: true, data: 'other sid' }));
      const real = sealReply(key, sid, 100n + BigInt(id), { id, ok: true, data: `real ${id}` });
      answer(real);
      answer(real);
    });
    await new Promise<void>((resolve) => fake.bind(0, '127.0.0.1', () => resolve()));
    const frames: InboundFrame[] = [];
    const link = await udpTransport({ port: fake.address().port, retryIntervalMs: 10_000 }).open(
      { credential: accessToken, udpKey, baseUrl: 'http://unused', handshakeTimeoutMs: 1000 },
      { frame: (frame) => frames.push(frame), closed: () => {} },
    );
    link.send({ id: 1, portal: '/game', gate: 'ping', data: null });
    link.send({ id: 2, portal: '/game', gate: 'ping', data: null });
    await expect.poll(() => frames.length, { timeout: 2000 }).toBe(2);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(frames).toEqual([{ id: 1, ok: true, data: 'real 1' }, { id: 2, ok: true, data: 'real 2' }]);
    link.close();
    await new Promise<void>((resolve) => fake.close(() => resolve()));
  });
});
