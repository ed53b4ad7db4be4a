/**
 * A refresh frame the server cannot serve (its session store is busy) is refused with the
 * server's retry hint, and the client's error carries it, so a caller knows when to try again.
 */
import 'reflect-metadata';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { JwtAuthController, createPortcullisApp } from '@portcullis/express';
import { createMemoryTestStack, type TestStack } from '@portcullis/core/testing';
import { PortcullisError, silentLoggerFactory } from '@portcullis/core';
import { attachWebSocketTransport, type WebSocketTransport } from '@portcullis/ws';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { PortcullisClient, PortcullisClientError, webSocketTransport } from '../src/node.js';
import { TestGamePortal } from '../../../test/conformance/support/test-portal.js';

class RefusalAuthController extends JwtAuthController {}

let stack: TestStack;
let server: Server;
let transport: WebSocketTransport;
let baseUrl: string;

beforeAll(async () => {
  stack = await createMemoryTestStack({ portals: [TestGamePortal], env: { SVC__SECURITY__PASSWORD__WORK_FACTOR: '4' } });
  server = createServer(createPortcullisApp(stack.container, { controllers: [RefusalAuthController] }));
  transport = attachWebSocketTransport(server, { loggers: silentLoggerFactory, dispatcher: stack.dispatcher, registry: stack.registry });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await transport?.close();
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  await stack?.close();
});

describe('an in-band refresh refused unavailable', () => {
  it('rejects with the server\'s retry hint and leaves the connection serving its old pair', async () => {
    const client = new PortcullisClient({ baseUrl });
    await client.signup({ email: 'busy@example.com', username: 'busyplayer', password: 'correct horse battery' });
    const conn = await client.connect({ transport: webSocketTransport(), reconnect: false });
    // The store stands in as busy: the one refresh is answered as a store that asks for 2 s would be.
    vi.spyOn(stack.sessions, 'refresh').mockRejectedValueOnce(new PortcullisError('unavailable', 'store busy', { retryAfterSeconds: 2 }));
    const refused = await conn.refreshInBand(client.tokens.session!.refreshToken).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(PortcullisClientError);
    expect(refused).toMatchObject({ code: 'unavailable', retryAfterMs: 2000, retryAfterSeconds: 2 });
    await expect(conn.request('/game', 'move', { x: 1, y: 2 })).resolves.toMatchObject({ x: 1 });
    conn.close();
  });
});
