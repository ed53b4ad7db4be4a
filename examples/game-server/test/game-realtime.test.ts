/**
 * The example's `/game` portal on all three transports, as `npm start` serves it:
 * ping open, time open unless shields:fallback says otherwise, move with a
 * session token and at most 20 per second per connection, whoami with a JWT.
 */
import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JwtTokenIssuer, loadConfig, silentLoggerFactory, TokenSessionSync } from '@portcullis/core';
import { connectTcp, connectUdp, connectWs, type RealtimeClient } from '../../../test/conformance/support/test-clients.js';
import { createGameServer, type GameServer } from '../src/game-server.js';
import { realtimeAddressesFromEnv, startRealtime, udpRequireMacFromEnv, type RealtimeServers } from '../src/realtime.js';

describe('example game server: /game on WebSocket, TCP and UDP', () => {
  let server: GameServer;
  let realtime: RealtimeServers;
  let connect: Record<string, (token?: string) => Promise<RealtimeClient>>;
  let jwt: (sub: string) => string;
  let session: (sub: string) => Promise<string>;
  let base: string;

  beforeAll(async () => {
    const config = loadConfig({ env: {}, tree: { svc: { security: { mode: 'jwt', key: Buffer.alloc(32, 3).toString('base64') } } } });
    server = await createGameServer({ config, port: 0, loggers: silentLoggerFactory });
    const { http } = await server.listen();
    base = http;
    realtime = await startRealtime(server.container, server.httpServer, { host: '127.0.0.1', tcpPort: 0, udpPort: 0 });
    const issuer = server.container.resolve(JwtTokenIssuer);
    const sessions = server.container.resolve(TokenSessionSync);
    jwt = (sub) => issuer.issueLoginPair(sub).accessToken;
    session = async (sub) => (await sessions.upgrade(jwt(sub))).accessToken;
    const wsUrl = `${http.replace(/^http/, 'ws')}/ws`;
    connect = {
      ws: (token) => connectWs(wsUrl, token),
      tcp: (token) => connectTcp(realtime.addresses.tcpPort, token),
      udp: (token) => connectUdp(realtime.addresses.udpPort, token),
    };
  });
  afterAll(async () => {
    await realtime.close();
    await server.close();
  });

  it('reads HOST, TCP_PORT and UDP_PORT with the documented defaults', () => {
    expect(realtimeAddressesFromEnv({})).toEqual({ host: '127.0.0.1', tcpPort: 3001, udpPort: 3002 });
    expect(realtimeAddressesFromEnv({ HOST: '0.0.0.0', TCP_PORT: '4001', UDP_PORT: '4002' })).toEqual({ host: '0.0.0.0', tcpPort: 4001, udpPort: 4002 });
    expect(() => realtimeAddressesFromEnv({ TCP_PORT: 'http' })).toThrow(/TCP_PORT/);
  });

  it('reads UDP_REQUIRE_MAC: true or false, off by default, anything else refused', () => {
    expect(udpRequireMacFromEnv({})).toBe(false);
    expect(udpRequireMacFromEnv({ UDP_REQUIRE_MAC: 'false' })).toBe(false);
    expect(udpRequireMacFromEnv({ UDP_REQUIRE_MAC: 'true' })).toBe(true);
    expect(() => udpRequireMacFromEnv({ UDP_REQUIRE_MAC: 'yes' })).toThrow(/UDP_REQUIRE_MAC/);
  });

  it.each(['ws', 'tcp', 'udp'])('%s: ping, move and whoami answer as the example README says', async (name) => {
    const open = connect[name]!;
    const anonymous = await open();
    expect(await anonymous.request('/game', 'ping')).toMatchObject({ ok: true, data: 'pong' });
    expect(await anonymous.request('/game', 'move', { x: 1, y: 2 })).toMatchObject({ ok: false, error: { code: 'unauthorized' } });
    const withSession = await open(await session('player-1'));
    expect(await withSession.request('/game', 'move', { x: 1, y: 2 })).toMatchObject({ ok: true, data: { x: 1, y: 2, by: 'player-1' } });
    const withJwt = await open(jwt('player-2'));
    expect(await withJwt.request('/game', 'whoami')).toMatchObject({ ok: true, data: 'player-2' });
    expect(await withJwt.request('/game', 'move', { x: 1, y: 2 })).toMatchObject({ ok: false, error: { code: 'unauthorized' } });
    await Promise.all([anonymous.close(), withSession.close(), withJwt.close()]);
  });

  it.each(['ws', 'tcp', 'udp'])('%s: time answers the clock to anyone under the default fallback, and move answers rate_limited past 20 per second', async (name) => {
    const open = connect[name]!;
    const anonymous = await open();
    const before = Date.now();
    const time = await anonymous.request('/game', 'time');
    expect(time).toMatchObject({ ok: true, data: { now: expect.any(Number) } });
    expect((time.data as { now: number }).now).toBeGreaterThanOrEqual(before);
    const player = await open(await session(`mover-${name}`));
    // Start at the beginning of the player's own one-second window, so the whole burst falls in it:
    // spend the window, then wait the refusal's retryAfterMs.
    let refused: { error: { retryAfterMs: number } } | undefined;
    for (let i = 0; refused === undefined && i < 21; i++) {
      const reply = await player.request('/game', 'move', { x: i, y: 0 });
      if (!reply.ok) refused = reply as unknown as { error: { retryAfterMs: number } };
    }
    expect(refused?.error.retryAfterMs).toBeGreaterThan(0);
    await new Promise((resolve) => setTimeout(resolve, refused!.error.retryAfterMs + 5));
    const replies = await Promise.all(Array.from({ length: 25 }, (_, i) => player.request('/game', 'move', { x: i, y: 0 })));
    expect(replies.filter((r) => r.ok)).toHaveLength(20);
    for (const refused of replies.filter((r) => !r.ok)) expect(refused.error).toMatchObject({ code: 'rate_limited', retryAfterMs: expect.any(Number) });
    expect(await player.request('/game', 'ping')).toMatchObject({ ok: true, data: 'pong' });
    await Promise.all([anonymous.close(), player.close()]);
  });

  it('POST /auth/logout over HTTP closes the live sockets of that session (4401 on WebSocket)', async () => {
    const token = await session('player-3');
    const ws = await connect.ws!(token);
    const tcp = await connect.tcp!(token);
    expect(await ws.request('/game', 'move', { x: 0, y: 0 })).toMatchObject({ ok: true });
    expect(await tcp.request('/game', 'move', { x: 0, y: 0 })).toMatchObject({ ok: true });
    const logout = await fetch(`${base}/auth/logout`, { method: 'POST', headers: { authorization: `Bearer ${token}` } });
    expect(logout.status).toBe(204);
    expect(await ws.closed).toEqual({ code: 4401 });
    await tcp.closed;
    expect(tcp.inbox.all).toContainEqual({ type: 'auth', ok: false, error: { code: 'unauthorized', message: expect.any(String) } });
  });
});

describe('example game server with SVC__SECURITY__SHIELDS__FALLBACK=session', () => {
  let server: GameServer;
  let realtime: RealtimeServers;

  beforeAll(async () => {
    const config = loadConfig({
      env: { SVC__SECURITY__SHIELDS__FALLBACK: 'session' },
      tree: { svc: { security: { mode: 'jwt', key: Buffer.alloc(32, 3).toString('base64') } } },
    });
    server = await createGameServer({ config, port: 0, loggers: silentLoggerFactory });
    await server.listen();
    realtime = await startRealtime(server.container, server.httpServer, { host: '127.0.0.1', tcpPort: 0, udpPort: 0 });
  });
  afterAll(async () => {
    await realtime.close();
    await server.close();
  });

  it('closes time to anyone without a session, keeps ping open, and lets the /auth routes without a bearer work', async () => {
    const issuer = server.container.resolve(JwtTokenIssuer);
    const sessions = server.container.resolve(TokenSessionSync);
    const anonymous = await connectTcp(realtime.addresses.tcpPort);
    expect(await anonymous.request('/game', 'time')).toMatchObject({ ok: false, error: { code: 'unauthorized' } });
    expect(await anonymous.request('/game', 'ping')).toMatchObject({ ok: true, data: 'pong' });
    const token = (await sessions.upgrade(issuer.issueLoginPair('player-9').accessToken)).accessToken;
    const player = await connectUdp(realtime.addresses.udpPort, token);
    expect(await player.request('/game', 'time')).toMatchObject({ ok: true, data: { now: expect.any(Number) } });
    await Promise.all([anonymous.close(), player.close()]);
  });
});
