/**
 * Degrade, do not spiral: requests that waited while the server's event loop fell far
 * behind are answered `overloaded` at once, with a retry hint, their shield and
 * handler not run; one read soon after it was sent is answered if its credential can be
 * checked at once; as soon as the loop catches up, requests are served again.
 */
import { Gate, GateDispatcher, NeverShed, Portal, SessionOrJwtAuth, SessionShield, Shield, ShieldEnforcer, TokenSessionSync } from '@portcullis/core';
import { readShieldPlan } from '@portcullis/core/transport';
import { inject as injectToken, injectable } from 'tsyringe';
import { afterEach, beforeEach, describe, expect, inject, it, vi } from 'vitest';
import { createMemoryTestStack, createRedisTestStack, type TestStack } from '@portcullis/core/testing';
import { stall } from '../support/event-loop.js';
import { TestGamePortal } from './support/test-portal.js';
import { tcpDriver, udpDriver, wsDriver, type RealtimeClient, type TransportDriver } from './support/transport-drivers.js';

const redisUrl = inject('redisUrl');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A gate that revokes: refusing it for load would keep alive a session its moderators want ended. */
@Portal('/moderation')
@injectable()
class ModerationPortal {
  constructor(@injectToken(TokenSessionSync) private readonly sessions: TokenSessionSync) {}

  @NeverShed
  @SessionShield
  @Gate('ban')
  async ban(data: { playerId: string }): Promise<number> {
    return this.sessions.revokeAllFor(data.playerId);
  }
}

const drivers: Array<[string, () => TransportDriver]> = [
  ['ws', wsDriver],
  ['tcp', tcpDriver],
  ['udp', udpDriver],
];

describe.each(drivers)('%s: a server whose event loop is behind', (_name, makeDriver) => {
  let stack: TestStack;
  let driver: TransportDriver;
  let client: RealtimeClient | undefined;

  beforeEach(async () => {
    stack = await createMemoryTestStack({ portals: [TestGamePortal, ModerationPortal] });
    stack.dispatcher.shedWhenBehind(500); // a server's default; test stacks never shed unless asked
    driver = makeDriver();
    await driver.start(stack);
    await new Promise((resolve) => setTimeout(resolve, 100)); // past any stall of an earlier test
  });
  afterEach(async () => {
    vi.restoreAllMocks();
    await client?.close();
    await driver.stop();
    await stack.close();
  });

  it('answers requests read 700 ms late with overloaded and a retry hint, unrun, then serves again', async () => {
    const token = await stack.session('olga');
    client = await driver.connect(token);
    expect(await client.request('/game', 'move', { x: 1, y: 1 })).toMatchObject({ ok: true });
    const shieldChecks = vi.spyOn(ShieldEnforcer.prototype, 'decide');

    const late = [1, 2, 3].map((x) => client!.request('/game', 'move', { x, y: 0 }));
    stall(700); // the requests wait in the socket while the loop is busy
    for (const reply of await Promise.all(late)) {
      expect(reply).toMatchObject({ ok: false, error: { code: 'overloaded' } });
      expect(reply.error?.retryAfterMs).toBeGreaterThanOrEqual(500);
    }
    expect(shieldChecks).not.toHaveBeenCalled();

    await new Promise((resolve) => setTimeout(resolve, 100)); // the loop catches up
    expect(await client.request('/game', 'move', { x: 4, y: 4 })).toMatchObject({ ok: true, data: { x: 4, y: 4, by: 'olga' } });
    expect(shieldChecks).toHaveBeenCalledTimes(1);
  });

  it('tells the dispatcher how long a request can have waited: since its connection was last read (a datagram: unknown)', async () => {
    const token = await stack.session('sam');
    client = await driver.connect(token);
    const dispatch = vi.spyOn(GateDispatcher.prototype, 'dispatch');
    expect(await client.request('/game', 'move', { x: 1, y: 1 })).toMatchObject({ ok: true });
    await sleep(80);
    expect(await client.request('/game', 'move', { x: 2, y: 2 })).toMatchObject({ ok: true });
    const waited = dispatch.mock.calls.map((call) => call[2]);
    expect(waited).toHaveLength(2);
    if (_name === 'udp') expect(waited).toEqual([undefined, undefined]);
    else {
      expect(waited[1]).toBeGreaterThanOrEqual(70); // timers may fire a little early on the loop's coarser clock
      expect(waited[1]).toBeLessThan(5000);
    }
  });

  it('serves a gate marked @NeverShed read 700 ms late, and its revocation happens; an unmarked gate as late is shed', async () => {
    const victim = await stack.session('victor');
    client = await driver.connect(await stack.session('nina'));
    expect(await client.request('/game', 'move', { x: 1, y: 1 })).toMatchObject({ ok: true });
    const ban = client.request('/moderation', 'ban', { playerId: 'victor' });
    const move = client.request('/game', 'move', { x: 2, y: 2 });
    stall(700);
    expect(await ban).toMatchObject({ ok: true, data: 1 });
    expect(await move).toMatchObject({ ok: false, error: { code: 'overloaded' } });
    expect(await stack.sessions.validate(victim)).toBeUndefined();
  });

  it('keeps serving when shedding is turned off, however late', async () => {
    stack.dispatcher.shedWhenBehind(false);
    const token = await stack.session('pavel');
    client = await driver.connect(token);
    expect(await client.request('/game', 'move', { x: 1, y: 1 })).toMatchObject({ ok: true });
    const late = client.request('/game', 'move', { x: 2, y: 2 });
    stall(700);
    expect(await late).toMatchObject({ ok: true, data: { x: 2, y: 2, by: 'pavel' } });
  });
});

// Entries in the near cache live 0.8–1 s.
const shortNearCache = { portals: [TestGamePortal], security: { session: { 'near-cache-seconds': 1 } } };
const stacks: Array<[string, () => Promise<TestStack>]> = [['memory', () => createMemoryTestStack(shortNearCache)]];
if (redisUrl) stacks.push(['Redis', () => createRedisTestStack(redisUrl, shortNearCache)]);

describe.each(stacks)('%s: while the loop is behind, a request its connection read soon after the read before', (_store, makeStack) => {
  let stack: TestStack | undefined;
  afterEach(async () => {
    await stack?.close();
    stack = undefined;
  });

  it('is answered at once when its shield can answer now; one that may have waited through the lag is shed', async () => {
    stack = await makeStack();
    const conn = { clientId: 'c1', transport: 'ws', remoteAddress: undefined, credential: await stack.session('rosa') } as const;
    const move = (id: number, waitedMs?: number) => stack!.dispatcher.dispatch({ id, portal: '/game', gate: 'move', data: { x: id, y: 0 } }, conn, waitedMs);
    expect(await move(1)).toMatchObject({ ok: true }); // the session is in the near cache now
    stack.dispatcher.shedWhenBehind(20);
    stall(60);
    // Read 5 ms after the connection's read before it: it waited no longer than that, whatever the lag.
    expect(move(2, 5)).toEqual({ id: 2, ok: true, data: { x: 2, y: 0, by: 'rosa' } });
    expect(stack.dispatcher.dispatch({ id: 3, portal: '/game', gate: 'ping' }, conn, 5)).toEqual({ id: 3, ok: true, data: 'pong' });
    expect(move(4, 60)).toMatchObject({ id: 4, ok: false, error: { code: 'overloaded' } });
    expect(move(5)).toMatchObject({ id: 5, ok: false, error: { code: 'overloaded' } }); // no read time: the lag alone decides
  });
});

describe('in memory, while the loop is behind, a @JwtShield request read soon after the read before', () => {
  let stack: TestStack | undefined;
  afterEach(async () => {
    await stack?.close();
    stack = undefined;
  });

  it('is answered at once: the in-memory store tells a spent JWT without waiting', async () => {
    stack = await createMemoryTestStack(shortNearCache);
    const conn = { clientId: 'c1', transport: 'ws', remoteAddress: undefined, credential: stack.jwt('ingrid'), memo: new Map() } as const;
    const whoami = (id: number, waitedMs?: number) => stack!.dispatcher.dispatch({ id, portal: '/game', gate: 'whoami' }, conn, waitedMs);
    stack.dispatcher.shedWhenBehind(20);
    stall(60);
    expect(whoami(1, 5)).toEqual({ id: 1, ok: true, data: 'ingrid' });
    expect(whoami(2, 60)).toMatchObject({ id: 2, ok: false, error: { code: 'overloaded' } });
    // Spent on an upgrade, the JWT is refused at once, behind or not.
    await stack.sessions.upgrade(conn.credential);
    stall(60);
    expect(whoami(3, 5)).toMatchObject({ id: 3, ok: false, error: { code: 'unauthorized' } });
  });
});

describe.skipIf(!redisUrl)('on Redis, a server whose loop is behind', () => {
  let stack: TestStack | undefined;
  afterEach(async () => {
    vi.restoreAllMocks();
    await stack?.close();
    stack = undefined;
  });

  it('answers a request whose session must be read again overloaded at once, not queued behind the store read, and that read fills the near cache for the next', async () => {
    stack = await createRedisTestStack(redisUrl!, shortNearCache);
    const conn = { clientId: 'c1', transport: 'ws', remoteAddress: undefined, credential: await stack.session('saul') } as const;
    const move = (id: number, waitedMs?: number) => stack!.dispatcher.dispatch({ id, portal: '/game', gate: 'move', data: { x: id, y: 0 } }, conn, waitedMs);
    expect(await move(1)).toMatchObject({ ok: true });
    await sleep(1100); // the near-cache entry (0.8–1 s) has ended: the next check asks the store
    stack.dispatcher.shedWhenBehind(20);
    stall(60);
    const reply = move(2, 5);
    expect(reply).not.toBeInstanceOf(Promise); // refused at once, not queued behind the store read
    expect(reply).toMatchObject({ id: 2, ok: false, error: { code: 'overloaded' } });
    stack.dispatcher.shedWhenBehind(false);
    // The store read the refused request started (SessionAuth.peek on a miss) answers; sessions.peek reads the near cache only.
    await vi.waitFor(() => expect(stack!.sessions.peek(conn.credential)).toMatchObject({ id: 'saul' }), { timeout: 2000, interval: 10 });
    const next = move(3, 5);
    expect(next).not.toBeInstanceOf(Promise);
    expect(next).toEqual({ id: 3, ok: true, data: { x: 3, y: 0, by: 'saul' } });
  });

  it('sheds a @JwtShield gate by the lag alone, with no store read: its check reads Redis every time and would warm nothing', async () => {
    stack = await createRedisTestStack(redisUrl!, shortNearCache);
    const conn = { clientId: 'c1', transport: 'ws', remoteAddress: undefined, credential: stack.jwt('tess'), memo: new Map() } as const;
    const whoami = (id: number, waitedMs?: number) => stack!.dispatcher.dispatch({ id, portal: '/game', gate: 'whoami' }, conn, waitedMs);
    expect(await whoami(1)).toEqual({ id: 1, ok: true, data: 'tess' });
    const storeChecks = vi.spyOn(TokenSessionSync.prototype, 'isJwtInvalidated');
    stack.dispatcher.shedWhenBehind(20);
    stall(60);
    const reply = whoami(2, 5);
    expect(reply).not.toBeInstanceOf(Promise);
    expect(reply).toMatchObject({ id: 2, ok: false, error: { code: 'overloaded' } });
    expect(storeChecks).not.toHaveBeenCalled();
  });

  it('asks a shield taking sessions or JWTs about a JWT without a store read, as @JwtShield is asked', async () => {
    stack = await createRedisTestStack(redisUrl!, shortNearCache);
    class Logout {
      @Shield(SessionOrJwtAuth) logout(): void {}
    }
    const enforcer = stack.container.resolve(ShieldEnforcer);
    const ctx = { transport: 'http', credential: stack.jwt('uma'), clientId: 'c1', remoteAddress: undefined, memo: new Map() } as const;
    const storeChecks = vi.spyOn(TokenSessionSync.prototype, 'isJwtInvalidated');
    expect(enforcer.decideAtOnce(readShieldPlan(Logout, 'logout'), ctx)).toBeUndefined();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(storeChecks).not.toHaveBeenCalled();
    expect(await enforcer.decide(readShieldPlan(Logout, 'logout'), ctx)).toMatchObject({ ok: true, principal: { id: 'uma' } });
  });

  it('leaves the players shed through an overload longer than the near cache lasts in the near cache: the first request after it is answered at once, from it', async () => {
    // Entries live 0.8–1 s; the overload lasts 2.5 s.
    stack = await createRedisTestStack(redisUrl!, { portals: [TestGamePortal], security: { session: { 'near-cache-seconds': 1 } } });
    const conn = { clientId: 'c1', transport: 'ws', remoteAddress: undefined, credential: await stack.session('quinn') } as const;
    const move = (id: number) => stack!.dispatcher.dispatch({ id, portal: '/game', gate: 'move', data: { x: id, y: 0 } }, conn);
    expect(await move(1)).toMatchObject({ ok: true });
    // Shedding starts after the first request: a busy test machine can leave the loop over 20 ms
    // behind while the stack is set up, and that first request is not part of the overload.
    stack.dispatcher.shedWhenBehind(20);

    const shieldChecks = vi.spyOn(ShieldEnforcer.prototype, 'decide');
    const until = performance.now() + 2500;
    let id = 2;
    while (performance.now() < until) {
      stall(60); // this request was read 60 ms late
      expect(move(id++)).toMatchObject({ ok: false, error: { code: 'overloaded' } });
      await sleep(30); // loop turns between, for timers and store replies
    }
    expect(shieldChecks).not.toHaveBeenCalled();
    stack.dispatcher.shedWhenBehind(false); // the overload is over, however late the gauge's last tick was

    const reply = move(id);
    expect(reply).not.toBeInstanceOf(Promise); // a miss would wait for a store read
    expect(reply).toMatchObject({ ok: true, data: { by: 'quinn' } });
  });
});
