/**
 * A refresh frame the server cannot serve (its session store is busy) is refused with the
 * server's retry hint, and the client's error carries it, so a caller knows when to try again.
 */
import 'reflect-metadata';
import { JwtAuthController } from '@portcullis/express';
import { createMemoryTestStack, type TestStack } from '@portcullis/core/testing';
import { PortcullisError } from '@portcullis/core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { PortcullisClient, PortcullisClientError, webSocketTransport } from '../src/node.js';
import { TestGamePortal } from '../../../test/conformance/support/test-portal.js';
import { serveStack, type StackServer } from './support/stack-server.js';

class RefusalAuthController extends JwtAuthController {}

let stack: TestStack;
let served: StackServer;

beforeAll(async () => {
  stack = await createMemoryTestStack({ portals: [TestGamePortal], env: { SVC__SECURITY__PASSWORD__WORK_FACTOR: '4' } });
  served = await serveStack(stack, RefusalAuthController);
});

afterAll(async () => {
  await served?.close();
  await stack?.close();
});

describe('an in-band refresh refused unavailable', () => {
  it('rejects with the server\'s retry hint and leaves the connection serving its old pair', async () => {
    const client = new PortcullisClient({ baseUrl: served.baseUrl });
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
