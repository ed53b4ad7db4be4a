import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  PortcullisClient, PortcullisClientError, tcpTransport, udpTransport, webSocketTransport,
  type ConnectOptions, type RealtimeConnection, type RealtimeTransport,
} from '../src/node.js';
import { startGameServer, type RunningGameServer } from './support/game-server-harness.js';
import { FAST_RECONNECT, reauthenticatingClient, signedUpClient } from './support/signed-up-clients.js';
import { stall } from '../../../test/support/event-loop.js';

let server: RunningGameServer;
beforeAll(async () => { server = await startGameServer(); });
afterAll(async () => { await server?.stop(); });

const transports: Array<[string, () => RealtimeTransport]> = [
  ['WebSocket', () => webSocketTransport()],
  ['WebSocket with the auth frame (as browsers do)', () => webSocketTransport({ auth: 'frame', WebSocket: (globalThis as unknown as { WebSocket?: never }).WebSocket ?? undefined })],
  ['TCP', () => tcpTransport({ port: server.tcpPort })],
  ['UDP', () => udpTransport({ port: server.udpPort, retryIntervalMs: 50 })],
];

/** A signed-up client of the shared server, and the id of its principal. */
async function signedUp(): Promise<{ client: PortcullisClient; id: string }> {
  const { client } = await signedUpClient(server);
  const me = (await (await client.authorizedFetch('/api/me')).json()) as { id: string };
  return { client, id: me.id };
}

/** Resolves when the client noticed its link dropped (UDP has no link to drop). */
function dropNoticed(conn: RealtimeConnection): Promise<void> {
  if (conn.transport === 'udp') return Promise.resolve();
  return new Promise((resolve) => { const off = conn.on('reconnecting', () => { off(); resolve(); }); });
}

function nextOpen(conn: RealtimeConnection): Promise<boolean> {
  return new Promise((resolve) => { const off = conn.on('open', ({ reconnected }) => { off(); resolve(reconnected); }); });
}

describe.each(transports)('real-time over %s, against the example server', (_name, transport) => {
  const connect = (client: PortcullisClient, options: ConnectOptions = {}) =>
    client.connect({ transport: transport(), reconnect: FAST_RECONNECT, ...options });

  it('calls move with the session token and gets the reply data, the principal id included', async () => {
    const { client, id } = await signedUp();
    const conn = await connect(client);
    expect(conn.state).toBe('open');
    await expect(conn.request('/game', 'move', { x: 3, y: 4 })).resolves.toEqual({ x: 3, y: 4, by: id });
    await expect(conn.request('/game', 'ping')).resolves.toBe('pong');
    conn.close();
  });

  it('matches replies to requests by id when many are in flight', async () => {
    const { client } = await signedUp();
    const conn = await connect(client);
    const moves = await Promise.all(Array.from({ length: 25 }, (_, i) => conn.request<{ x: number; y: number }>('/game', 'move', { x: i, y: 100 - i })));
    expect(moves.map((m) => [m.x, m.y])).toEqual(Array.from({ length: 25 }, (_, i) => [i, 100 - i]));
    conn.close();
  });

  it('backs off a gate that answered rate_limited (move: 20 per second) for the server\'s hint and sends again; with rateLimited: reject, rejects with the hint', async () => {
    const { client } = await signedUp();
    const conn = await connect(client);
    const started = Date.now();
    const moves = await Promise.all(Array.from({ length: 30 }, (_, i) => conn.request<{ x: number }>('/game', 'move', { x: i, y: 0 })));
    expect(moves.map((m) => m.x)).toEqual(Array.from({ length: 30 }, (_, i) => i));
    expect(Date.now() - started).toBeLessThan(5000);
    conn.close();
    const impatient = await connect(client, { rateLimited: 'reject' });
    const settled = await Promise.allSettled(Array.from({ length: 30 }, (_, i) => impatient.request('/game', 'move', { x: i, y: 0 })));
    const refused = settled.filter((r): r is PromiseRejectedResult => r.status === 'rejected').map((r) => r.reason as PortcullisClientError);
    expect(refused.length).toBeGreaterThanOrEqual(10);
    for (const error of refused) {
      expect(error).toMatchObject({ code: 'rate_limited', retryAfterMs: expect.any(Number) });
      expect(error.retryAfterMs!).toBeGreaterThan(0);
      expect(error.retryAfterMs!).toBeLessThanOrEqual(1000);
    }
    impatient.close();
  });

  it('rejects ok:false replies with the typed error: not_found, and unauthorized for a gate the credential cannot pass', async () => {
    const { client } = await signedUp();
    const conn = await connect(client);
    const missing = conn.request('/game', 'teleport', {});
    await expect(missing).rejects.toBeInstanceOf(PortcullisClientError);
    await expect(missing).rejects.toMatchObject({ code: 'not_found', status: undefined });
    await expect(conn.request('/game', 'whoami')).rejects.toMatchObject({ code: 'unauthorized' });
    conn.close();
  });

  it('carries a JWT instead for @JwtShield gates, and nothing for anonymous connections', async () => {
    const { client, id } = await signedUp();
    const withJwt = await connect(client, { credential: 'jwt' });
    await expect(withJwt.request('/game', 'whoami')).resolves.toBe(id);
    withJwt.close();
    const anonymous = await connect(new PortcullisClient({ baseUrl: server.baseUrl }), { credential: 'none' });
    await expect(anonymous.request('/game', 'ping')).resolves.toBe('pong');
    // Padded: the UDP server answers an unauthenticated sender only with replies no larger than the request.
    await expect(anonymous.request('/game', 'move', { x: 1, y: 1, pad: 'x'.repeat(40) })).rejects.toMatchObject({ code: 'unauthorized' });
    anonymous.close();
  });

  it('times out a request that gets no reply, and close() rejects what is pending', async () => {
    const { client } = await signedUp();
    const conn = await connect(client);
    const dropped = dropNoticed(conn);
    await server.stop();
    try {
      await dropped;
      await expect(conn.request('/game', 'ping', null, { timeoutMs: 150 })).rejects.toMatchObject({ code: 'timeout' });
      const pending = conn.request('/game', 'ping', null, { timeoutMs: 5_000 });
      conn.close();
      await expect(pending).rejects.toMatchObject({ code: 'connection_closed' });
      expect(conn.state).toBe('closed');
      await expect(conn.request('/game', 'ping')).rejects.toMatchObject({ code: 'connection_closed' });
    } finally {
      await server.start();
    }
  });

  it('after a restart (in-memory store: sessions, accounts and revocations are gone, the JWTs predate the new store epoch) reconnects through reauthenticate once, and requests work again', async () => {
    // The account is gone with the in-memory store, so logging in again means signing up again.
    const { client, reauthentications } = await reauthenticatingClient(server);
    const conn = await connect(client);
    await expect(conn.request('/game', 'move', { x: 1, y: 1 })).resolves.toMatchObject({ x: 1, y: 1 });
    const lostRefreshToken = client.tokens.login?.refreshToken;
    const reopened = nextOpen(conn);
    await server.restart();
    // UDP has no connection to re-open: its next request renews the refused session and is sent again.
    if (conn.transport !== 'udp') expect(await reopened).toBe(true);
    const moved = await conn.request<{ by: string }>('/game', 'move', { x: 2, y: 2 });
    expect(moved).toMatchObject({ x: 2, y: 2 });
    expect(reauthentications()).toBe(1);
    expect(client.tokens.login?.refreshToken).not.toBe(lostRefreshToken);
    // The restarted server knows the principal the connection now carries: the re-created account.
    const me = (await (await client.authorizedFetch('/api/me')).json()) as { id: string };
    expect(moved.by).toBe(me.id);
    // And the refresh token from before the restart really is refused by it (the store epoch).
    await expect(client.api.refresh(lostRefreshToken!)).rejects.toMatchObject({ code: 'invalid_token', status: 401 });
    conn.close();
  });

  it('after a restart without reauthenticate, closes with not_authenticated (401), forgets the dead tokens, and does not retry', async () => {
    const { client } = await signedUp();
    const conn = await connect(client);
    await expect(conn.request('/game', 'ping')).resolves.toBe('pong');
    const closed = new Promise<{ error?: PortcullisClientError }>((resolve) => conn.on('close', resolve));
    const refreshes = () => server.hits.get('/auth/refresh') ?? 0;
    const refreshesBefore = refreshes();
    await server.restart();
    // UDP notices on its next request to a shielded gate, which fails the same way.
    if (conn.transport === 'udp') await expect(conn.request('/game', 'move', { x: 1, y: 1 })).rejects.toMatchObject({ code: 'not_authenticated', status: 401 });
    expect((await closed).error).toMatchObject({ code: 'not_authenticated', status: 401 });
    expect(conn.state).toBe('closed');
    expect(client.tokens).toEqual({});
    // One refused session refresh, one refused JWT refresh, and no more, not even later.
    expect(refreshes() - refreshesBefore).toBe(2);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(refreshes() - refreshesBefore).toBe(2);
    await expect(connect(client)).rejects.toMatchObject({ code: 'not_authenticated' });
  });

  it('is closed by logout, which revokes the session it carried', async () => {
    const { client } = await signedUp();
    const conn = await connect(client);
    const closed = new Promise((resolve) => conn.on('close', resolve));
    await client.logout();
    await closed;
    expect(conn.state).toBe('closed');
    await expect(connect(client)).rejects.toMatchObject({ code: 'not_authenticated' });
  });
});

describe.each(transports.slice(0, 3))('server push over %s', (_name, transport) => {
  it('delivers frames that are not replies to push listeners', async () => {
    const { client, id } = await signedUp();
    const conn = await client.connect({ transport: transport() });
    const pushed = new Promise((resolve) => conn.on('push', resolve));
    await conn.request('/game', 'ping');
    expect(server.registry.sendToPrincipal(id, { type: 'event', data: 'match found' })).toBe(1);
    await expect(pushed).resolves.toEqual({ type: 'event', data: 'match found' });
    conn.close();
  });
});

describe('reconnect when every refresh token is refused', () => {
  it('calls reauthenticate (here: the key rotated and the in-memory accounts are gone, so it signs up again)', async () => {
    const { client, reauthentications } = await reauthenticatingClient(server);
    const conn = await client.connect({ reconnect: FAST_RECONNECT });
    const reopened = nextOpen(conn);
    await server.restart({ rotateKey: true });
    expect(await reopened).toBe(true);
    await expect(conn.request('/game', 'move', { x: 5, y: 5 })).resolves.toMatchObject({ x: 5, y: 5 });
    expect(reauthentications()).toBe(1);
    conn.close();
  });

  it('without reauthenticate, closes with not_authenticated instead of retrying forever', async () => {
    const { client } = await signedUpClient(server);
    const conn = await client.connect({ reconnect: FAST_RECONNECT });
    const closed = new Promise<{ error?: PortcullisClientError }>((resolve) => conn.on('close', resolve));
    await server.restart({ rotateKey: true });
    expect((await closed).error?.code).toBe('not_authenticated');
  });
});

describe('a login held across a restart of an in-memory server, not yet upgraded', () => {
  it('connect() and authorizedFetch fail with not_authenticated (401), not the raw invalid_token of the refused JWT', async () => {
    const { client } = await signedUp();
    expect(client.tokens.login?.accessToken).toBeDefined();
    await server.restart();
    const refused = client.connect({ reconnect: FAST_RECONNECT });
    await expect(refused).rejects.toBeInstanceOf(PortcullisClientError);
    await expect(refused).rejects.toMatchObject({ code: 'not_authenticated', status: 401, cause: { code: 'invalid_token' } });
    expect(client.tokens).toEqual({});
    await expect(client.authorizedFetch('/api/me')).rejects.toMatchObject({ code: 'not_authenticated' });
  });

  it('with reauthenticate, connect() logs in again once, upgrades the new JWT and connects', async () => {
    const { client, reauthentications } = await reauthenticatingClient(server);
    await (await client.authorizedFetch('/api/me')).json();
    await server.restart();
    const conn = await client.connect({ reconnect: FAST_RECONNECT });
    await expect(conn.request('/game', 'move', { x: 6, y: 6 })).resolves.toMatchObject({ x: 6, y: 6 });
    expect(reauthentications()).toBe(1);
    conn.close();
  });

  it('a reauthenticate hook that cannot log in ends in its own error, called once', async () => {
    // The in-memory account is gone: logging in with it is refused.
    const { client, reauthentications } = await reauthenticatingClient(server, (c, account) => c.loginWithUsername(account.username, account.password));
    await server.restart();
    await expect(client.connect({ reconnect: FAST_RECONNECT })).rejects.toMatchObject({ code: 'invalid_credentials' });
    expect(reauthentications()).toBe(1);
  });
});

const redisUrl = inject('redisUrl');

describe.skipIf(redisUrl === null)(redisUrl === null ? 'a restart on Redis — SKIPPED, redis-server not found' : 'a restart on Redis', () => {
  let onRedis: RunningGameServer;
  beforeAll(async () => { onRedis = await startGameServer({ store: { provider: 'redis', url: redisUrl! } }); });
  afterAll(async () => { await onRedis?.stop(); });

  it.each(transports.map(([name]) => name).filter((name) => !name.includes('auth frame')))(
    'keeps the session over %s: the store and its epoch survive, reauthenticate is not needed',
    async (name) => {
      const transport = name === 'TCP' ? tcpTransport({ port: onRedis.tcpPort })
        : name === 'UDP' ? udpTransport({ port: onRedis.udpPort, retryIntervalMs: 50 })
        : webSocketTransport();
      const { client, reauthentications } = await reauthenticatingClient(onRedis, async () => {});
      const conn = await client.connect({ transport, reconnect: FAST_RECONNECT });
      await expect(conn.request('/game', 'ping')).resolves.toBe('pong');
      const session = client.tokens.session?.accessToken;
      const reopened = nextOpen(conn);
      // Past the second of the login, so a new epoch (had the store lost its data) would refuse its JWTs.
      await new Promise((resolve) => setTimeout(resolve, 1000 - (Date.now() % 1000) + 10));
      await onRedis.restart();
      if (conn.transport !== 'udp') expect(await reopened).toBe(true);
      await expect(conn.request('/game', 'move', { x: 7, y: 7 })).resolves.toMatchObject({ x: 7, y: 7 });
      expect(client.tokens.session?.accessToken).toBe(session);
      // The JWT refresh token from before the restart still works.
      await expect(client.refresh('login')).resolves.toMatchObject({ kind: 'login' });
      expect(reauthentications()).toBe(0);
      conn.close();
    },
  );
});

describe('a server that fell behind (answers overloaded)', () => {
  // The server runs in this process: blocking the loop after a request is sent makes the server
  // read it more than 500 ms late, and shed it (`overloaded`, with a retry hint), unrun.
  it('backs the gate off for the hint and sends again; with rateLimited: reject, rejects with overloaded and the hint', async () => {
    const { client, id } = await signedUp();
    const conn = await client.connect({ transport: webSocketTransport(), reconnect: FAST_RECONNECT });
    await expect(conn.request('/game', 'ping')).resolves.toBe('pong');
    const sentAt = performance.now();
    const patient = conn.request('/game', 'move', { x: 5, y: 6 });
    stall(700);
    await expect(patient).resolves.toEqual({ x: 5, y: 6, by: id });
    // Answered after the stall, the hint's back-off (at least 100 ms) and a second round trip:
    // a request served at once would have its answer right after the stall.
    expect(performance.now() - sentAt).toBeGreaterThan(800);
    conn.close();

    const impatient = await client.connect({ transport: webSocketTransport(), reconnect: FAST_RECONNECT, rateLimited: 'reject' });
    await expect(impatient.request('/game', 'ping')).resolves.toBe('pong');
    const refused = impatient.request('/game', 'move', { x: 1, y: 1 });
    stall(700);
    const error = (await refused.catch((e: unknown) => e)) as PortcullisClientError;
    expect(error).toBeInstanceOf(PortcullisClientError);
    expect(error).toMatchObject({ code: 'overloaded', retryAfterMs: expect.any(Number) });
    expect(error.retryAfterMs!).toBeGreaterThan(0);
    expect(error.retryAfterMs!).toBeLessThanOrEqual(5000);
    // After the hint the server has caught up and serves the gate again.
    await new Promise((resolve) => setTimeout(resolve, error.retryAfterMs));
    await expect(impatient.request('/game', 'move', { x: 2, y: 2 })).resolves.toEqual({ x: 2, y: 2, by: id });
    impatient.close();
  });
});
