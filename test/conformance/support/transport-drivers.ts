/**
 * One driver per transport, so the conformance suite is written once:
 * `start(stack)`, `connect(token?)`, then `request`, `closed` and `close` on the client.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'vitest';
import { ConnectionRegistry, silentLoggerFactory, UdpKeyring } from '@portcullis/core';
import { createTcpTransport, type TcpTransport, type TcpTransportOptions } from '@portcullis/tcp';
import { createUdpTransport, type UdpTransport, type UdpTransportOptions } from '@portcullis/udp';
import { attachWebSocketTransport, type WebSocketTransport, type WebSocketTransportOptions } from '@portcullis/ws';
import type { TestStack } from '@portcullis/core/testing';
import { connectTcp, connectUdp, connectWs, type RealtimeClient } from './test-clients.js';

export { ConnectRefused, type Closed, type RealtimeClient } from './test-clients.js';

export type TransportName = 'ws' | 'tcp' | 'udp';

export interface StartOptions {
  /**
   * Track connections in a registry that hears no revocation event, as on a server
   * whose event was lost: only the per-message check can refuse a revoked credential.
   */
  readonly deafRegistry?: boolean;
  readonly ws?: Partial<WebSocketTransportOptions>;
  readonly tcp?: Partial<TcpTransportOptions>;
  readonly udp?: Partial<UdpTransportOptions>;
}

export interface TransportDriver {
  readonly name: TransportName;
  /** False for UDP: no connection to close, each datagram stands alone. */
  readonly connectionOriented: boolean;
  start(stack: TestStack, options?: StartOptions): Promise<void>;
  connect(token?: string): Promise<RealtimeClient>;
  stop(): Promise<void>;
}

function deafRegistry(): ConnectionRegistry {
  return new ConnectionRegistry({ onRevocation: () => () => undefined }, silentLoggerFactory);
}

export function wsDriver(): TransportDriver & { url(): string; transport(): WebSocketTransport; connectWithAuthFrame(token: string | null): Promise<{ client: RealtimeClient; answer: unknown }> } {
  let server: Server;
  let transport: WebSocketTransport;
  let url = '';
  return {
    name: 'ws',
    connectionOriented: true,
    async start(stack, options = {}) {
      server = createServer((_req, res) => res.writeHead(404).end());
      transport = attachWebSocketTransport(server, { loggers: silentLoggerFactory, dispatcher: stack.dispatcher, registry: options.deafRegistry ? deafRegistry() : stack.registry, ...options.ws });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
      url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/ws`;
    },
    connect: (token) => connectWs(url, token),
    async connectWithAuthFrame(token) {
      const client = await connectWs(url);
      client.sendRaw(JSON.stringify({ type: 'auth', token }));
      const answer = await client.inbox.take((f) => (f as { type?: string }).type === 'auth');
      return { client, answer };
    },
    url: () => url,
    transport: () => transport,
    async stop() {
      await transport.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export function tcpDriver(): TransportDriver & { port(): number; transport(): TcpTransport } {
  let transport: TcpTransport;
  let port = 0;
  return {
    name: 'tcp',
    connectionOriented: true,
    async start(stack, options = {}) {
      transport = createTcpTransport({ loggers: silentLoggerFactory, dispatcher: stack.dispatcher, registry: options.deafRegistry ? deafRegistry() : stack.registry, ...options.tcp });
      port = (await transport.listen(0, '127.0.0.1')).port;
    },
    connect: (token) => connectTcp(port, token),
    port: () => port,
    transport: () => transport,
    stop: () => transport.close(),
  };
}

export function udpDriver(): TransportDriver & { port(): number; transport(): UdpTransport } {
  let transport: UdpTransport;
  let port = 0;
  return {
    name: 'udp',
    connectionOriented: false,
    async start(stack, options = {}) {
      transport = createUdpTransport({ loggers: silentLoggerFactory, dispatcher: stack.dispatcher, keyring: stack.container.resolve(UdpKeyring), ...options.udp });
      port = (await transport.bind(0, '127.0.0.1')).port;
    },
    connect: (token) => connectUdp(port, token),
    port: () => port,
    transport: () => transport,
    stop: () => transport.close(),
  };
}

/**
 * Pushes 60 KiB frames to `principal` until `transport` holds no connection any more: how a
 * test shows that a client which reads nothing is dropped at the output bound (within 5 s).
 */
export async function pushUntilDropped(stack: TestStack, principal: string, transport: { readonly connectionCount: number }): Promise<void> {
  const chunk = { type: 'event', data: 'y'.repeat(60 * 1024) };
  await expect
    .poll(() => {
      for (let i = 0; i < 20; i++) stack.registry.sendToPrincipal(principal, chunk);
      return transport.connectionCount;
    }, { timeout: 5000, interval: 10 })
    .toBe(0);
}
