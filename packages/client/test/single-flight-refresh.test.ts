import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuthApi, tcpTransport } from '../src/node.js';
import { startGameServer, type RunningGameServer } from './support/game-server-harness.js';
import { FAST_RECONNECT, reauthenticatingClient, signedUpClient } from './support/signed-up-clients.js';

let server: RunningGameServer;
beforeAll(async () => { server = await startGameServer(); });
afterAll(async () => { await server?.stop(); });

const refreshesReachingServer = () => server.hits.get('/auth/refresh') ?? 0;
const MINUTE = 60_000;

/** A signed-up client whose clock the test can move forward (the server's stays real). */
async function signedUpWithClock() {
  let offsetMs = 0;
  const { client } = await signedUpClient(server, { now: () => Date.now() + offsetMs });
  return { client, advance: (ms: number) => { offsetMs += ms; } };
}

describe('single-flight refresh, counted at the server', () => {
  it('20 concurrent refresh() calls send exactly one POST /auth/refresh and all get its answer', async () => {
    const { client } = await signedUpWithClock();
    await client.upgrade();
    const before = refreshesReachingServer();
    const results = await Promise.all(Array.from({ length: 20 }, () => client.refresh()));
    expect(refreshesReachingServer() - before).toBe(1);
    expect(new Set(results.map((r) => r.tokens.accessToken)).size).toBe(1);
    expect(client.tokens.session?.accessToken).toBe(results[0]?.tokens.accessToken);
    const conn = await client.connect();
    await expect(conn.request('/game', 'move', { x: 1, y: 1 })).resolves.toMatchObject({ x: 1, y: 1 });
    conn.close();
  });

  it('20 concurrent authorizedFetch calls with an expired JWT share one refresh', async () => {
    const { client, advance } = await signedUpWithClock();
    advance(16 * MINUTE);
    const before = refreshesReachingServer();
    const answers = await Promise.all(Array.from({ length: 20 }, () => client.authorizedFetch('/api/me')));
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
    expect(refreshesReachingServer() - before).toBe(1);
  });

  it('20 concurrent requests on a connection whose session expired renew it once and reconnect once', async () => {
    const { client, advance } = await signedUpWithClock();
    const conn = await client.connect({ transport: tcpTransport({ port: server.tcpPort }) });
    const opens: boolean[] = [];
    conn.on('open', ({ reconnected }) => opens.push(reconnected));
    const oldSession = client.tokens.session?.accessToken;
    advance(61 * MINUTE);
    const before = refreshesReachingServer();
    const moves = await Promise.all(Array.from({ length: 20 }, (_, i) => conn.request<{ x: number }>('/game', 'move', { x: i, y: 0 })));
    expect(moves.map((m) => m.x)).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(refreshesReachingServer() - before).toBe(1);
    expect(opens).toEqual([true]);
    expect(client.tokens.session?.accessToken).not.toBe(oldSession);
    conn.close();
  });

  it('after a restart that voids the login (in-memory store), 20 concurrent requests share one refused refresh of each kind and one reauthenticate', async () => {
    const { client, reauthentications } = await reauthenticatingClient(server);
    const conn = await client.connect({ transport: tcpTransport({ port: server.tcpPort }), reconnect: FAST_RECONNECT });
    const before = refreshesReachingServer();
    await server.restart();
    const moves = await Promise.all(Array.from({ length: 20 }, (_, i) => conn.request<{ x: number }>('/game', 'move', { x: i, y: 0 })));
    expect(moves.map((m) => m.x)).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(reauthentications()).toBe(1);
    expect(refreshesReachingServer() - before).toBe(2); // the session's and the JWT's, both refused
    conn.close();
  });

  it('20 concurrent authorizedFetch calls refused after such a restart share one refresh and one reauthenticate', async () => {
    const { client, reauthentications } = await reauthenticatingClient(server);
    await server.restart();
    const before = refreshesReachingServer();
    const answers = await Promise.all(Array.from({ length: 20 }, () => client.authorizedFetch('/api/me')));
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
    expect(reauthentications()).toBe(1);
    expect(refreshesReachingServer() - before).toBe(1);
  });

  it('why it matters: two uncoordinated refreshes with one JWT refresh token end the login', async () => {
    const { login } = await signedUpClient(server);
    const api = new AuthApi(server.baseUrl);
    const outcomes = await Promise.allSettled([api.refresh(login.refreshToken), api.refresh(login.refreshToken)]);
    expect(outcomes.map((o) => o.status).sort()).toEqual(['fulfilled', 'rejected']);
    const winner = outcomes.find((o) => o.status === 'fulfilled') as PromiseFulfilledResult<Awaited<ReturnType<AuthApi['refresh']>>>;
    await expect(api.refresh(winner.value.tokens.refreshToken)).rejects.toMatchObject({ code: 'invalid_token' });
  });
});
