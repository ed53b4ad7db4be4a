/**
 * The client and the server put the same bytes on the wire for the same frame:
 * `@portcullis/client`'s TCP transport talks to `@portcullis/tcp` through a proxy
 * that records both directions, and every recorded byte is what
 * `@portcullis/protocol` encodes for the frames each side meant to send.
 */
import 'reflect-metadata';
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { tcpTransport } from '@portcullis/client/node';
import { silentLoggerFactory } from '@portcullis/core';
import {
  encodeFrame, encodeReply, FrameDecoder, parseJsonFrame, readAuthFrame, type AuthFrame, type AuthReply, type GateReply, type GateRequest,
} from '@portcullis/protocol';
import { createTcpTransport, type TcpTransport } from '@portcullis/tcp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryTestStack, type TestStack } from '@portcullis/core/testing';
import { TestGamePortal } from './support/test-portal.js';

interface RecordingProxy {
  readonly port: number;
  readonly upstream: Buffer[];
  readonly downstream: Buffer[];
  close(): Promise<void>;
}

/** Forwards one TCP connection to `target`, keeping every chunk of each direction. */
async function recordingProxy(target: number): Promise<RecordingProxy> {
  const upstream: Buffer[] = [];
  const downstream: Buffer[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const backend = connect({ host: '127.0.0.1', port: target });
    for (const socket of [client, backend]) {
      sockets.add(socket);
      socket.on('error', () => {});
    }
    client.on('data', (chunk: Buffer) => (upstream.push(chunk), backend.write(chunk)));
    backend.on('data', (chunk: Buffer) => (downstream.push(chunk), client.write(chunk)));
    client.on('close', () => backend.destroy());
    backend.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    upstream,
    downstream,
    close: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

const frameBytes = (...texts: string[]) => Buffer.concat(texts.map((text) => encodeFrame(text)));

describe('the same bytes on both ends', () => {
  let stack: TestStack;
  let tcp: TcpTransport;
  let proxy: RecordingProxy;

  beforeAll(async () => {
    stack = await createMemoryTestStack({ portals: [TestGamePortal] });
    tcp = createTcpTransport({ dispatcher: stack.dispatcher, registry: stack.registry, loggers: silentLoggerFactory });
    proxy = await recordingProxy((await tcp.listen(0, '127.0.0.1')).port);
  });

  afterAll(async () => {
    await proxy.close();
    await tcp.close();
    await stack.close();
  });

  it('a TCP session between the client and the server is exactly the protocol encoding of its frames', async () => {
    const token = await stack.session('player-é');
    const received: unknown[] = [];
    const link = await tcpTransport({ port: proxy.port }).open(
      { credential: token, baseUrl: 'http://127.0.0.1', handshakeTimeoutMs: 5_000 },
      { frame: (frame) => received.push(frame), closed: () => {} },
    );
    const request: GateRequest = { id: 1, portal: '/game', gate: 'echo', data: { say: 'héllo €, 🎮', n: [1, 2.5, null] } };
    link.send(request);
    await expect.poll(() => received.length).toBe(1);
    link.close();

    const auth: AuthFrame = { type: 'auth', token };
    const accepted: AuthReply = { type: 'auth', ok: true };
    const reply: GateReply = { id: 1, ok: true, data: request.data };
    expect(received).toEqual([reply]);
    expect(Buffer.concat(proxy.upstream)).toEqual(frameBytes(JSON.stringify(auth), JSON.stringify(request)));
    expect(Buffer.concat(proxy.downstream)).toEqual(frameBytes(JSON.stringify(accepted), encodeReply(reply)));

    const serverSide = new FrameDecoder().push(Buffer.concat(proxy.upstream)).map((body) => parseJsonFrame(body));
    expect(readAuthFrame(serverSide[0])).toEqual(auth);
    expect(serverSide[1]).toEqual(request);
    expect(await stack.dispatcher.dispatch(serverSide[1], { clientId: 'again', transport: 'tcp', remoteAddress: undefined, credential: token })).toEqual(reply);
  });
});
