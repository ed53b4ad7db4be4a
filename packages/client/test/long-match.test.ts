/**
 * A long match: a WebSocket client whose session access token lives 1.5 s stays on one
 * socket through several rotations (the SDK refreshes in band ahead of expiry, the
 * server moves the socket to each new pair) and is closed only by a logout.
 */
import 'reflect-metadata';
import { JwtAuthController } from '@portcullis/express';
import { createMemoryTestStack, type TestStack } from '@portcullis/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PortcullisClient, webSocketTransport } from '../src/node.js';
import { TestGamePortal } from '../../../test/conformance/support/test-portal.js';
import { serveStack, type StackServer } from './support/stack-server.js';

class MatchAuthController extends JwtAuthController {}

let stack: TestStack;
let served: StackServer;
let baseUrl: string;
let httpRefreshes = 0;

beforeAll(async () => {
  stack = await createMemoryTestStack({
    portals: [TestGamePortal],
    env: { SVC__SECURITY__PASSWORD__WORK_FACTOR: '4' },
    stores: { sessionLifetimesMs: { access: 1500, refresh: 60_000 } },
  });
  served = await serveStack(stack, MatchAuthController);
  served.server.prependListener('request', (req) => { if (req.url === '/auth/refresh') httpRefreshes++; });
  baseUrl = served.baseUrl;
});

afterAll(async () => {
  await served?.close();
  await stack?.close();
});

describe('a long match', () => {
  it('stays on one WebSocket through at least three session rotations, then a logout closes it', async () => {
    const client = new PortcullisClient({ baseUrl, expirySkewMs: 200 });
    await client.signup({ email: 'match@example.com', username: 'matchplayer', password: 'correct horse battery' });
    const conn = await client.connect({ transport: webSocketTransport(), reconnect: false });
    const accessTokens = new Set<string>([client.tokens.session!.accessToken]);
    client.onTokens((tokens) => { if (tokens.session) accessTokens.add(tokens.session.accessToken); });
    let reconnects = 0;
    conn.on('reconnecting', () => reconnects++);
    const closed = new Promise<{ error?: Error }>((resolve) => conn.on('close', resolve));

    const deadline = Date.now() + 15_000;
    let moves = 0;
    while (accessTokens.size < 4 && Date.now() < deadline) {
      await expect(conn.request('/game', 'move', { x: moves, y: 0 })).resolves.toMatchObject({ x: moves });
      moves++;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(accessTokens.size).toBeGreaterThanOrEqual(4); // the first pair and three rotations
    expect(conn.state).toBe('open');
    expect(reconnects).toBe(0);
    // Every rotation went in band over this socket: the server never saw POST /auth/refresh.
    expect(httpRefreshes).toBe(0);
    expect(await stack.sessions.validate(client.tokens.session!.accessToken)).toMatchObject({ via: 'session' });
    await expect(conn.request('/game', 'move', { x: 99, y: 1 })).resolves.toMatchObject({ x: 99 });

    const logout = await fetch(`${baseUrl}/auth/logout`, { method: 'POST', headers: { authorization: `Bearer ${client.tokens.session!.accessToken}` } });
    expect(logout.status).toBe(204);
    const { error } = await closed;
    expect(error?.message).toContain('4401');
    expect(conn.state).toBe('closed');
  }, 30_000);
});
