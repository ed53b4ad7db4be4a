/**
 * `@RateLimit` on a fleet: two servers (stacks) on one real Redis share each
 * caller's count, a server spends what it claimed without asking Redis again, a
 * spent window is refused without a round trip, and a Redis that cannot be
 * reached gives `unavailable`, never a free pass; on a single Redis server, a
 * cluster and a sentinel set.
 */
import 'reflect-metadata';
import { Gate, Portal, RateLimit, SessionShield } from '@portcullis/core';
import { createRedisTestStack, storeUnavailable, type TestStack } from '@portcullis/core/testing';
import { rateLimitWindowEnd } from '../src/shield/rate-limiter.js';
import type { ConnectionContext } from '@portcullis/core/transport';
import { afterEach, describe, expect, inject, it, vi } from 'vitest';
import { everyRedisTopology } from '../../../test/support/redis-topologies.js';

const redisUrl = inject('redisUrl');

@Portal('/fleet')
class FleetPortal {
  @SessionShield
  @RateLimit({ limit: 10, windowSeconds: 60 })
  @Gate('move') move() {
    return 'moved';
  }

  @SessionShield
  @RateLimit({ limit: 40, windowSeconds: 60 })
  @Gate('chat') chat() {
    return 'said';
  }

  @SessionShield
  @RateLimit({ limit: 40, windowSeconds: 2 })
  @Gate('steer') steer() {
    return 'steered';
  }

  @SessionShield
  @RateLimit({ limit: 5, windowSeconds: 60, by: 'connection' })
  @Gate('wave') wave() {
    return 'waved';
  }

  @RateLimit({ limit: 2, windowSeconds: 1, by: 'ip' })
  @Gate('knock') knock() {
    return 'who is there';
  }
}

const conn = (credential: string | undefined, clientId = 'c1'): ConnectionContext => ({ clientId, transport: 'tcp', remoteAddress: '10.1.1.1', credential, memo: new Map() });

for (const { name, env: found } of everyRedisTopology()) describe.skipIf(!found)(`@RateLimit on one Redis shared by two servers (${name})${found ? '' : ' — SKIPPED, redis-server not found'}`, () => {
  const env = found ?? {};
  const stacks: TestStack[] = [];
  let a: TestStack;
  let b: TestStack;
  const twoServers = async () => {
    a = await createRedisTestStack(redisUrl!, { portals: [FleetPortal], env });
    b = await createRedisTestStack(redisUrl!, { portals: [FleetPortal], keyPrefix: a.keyPrefix, env });
    stacks.push(a, b);
  };
  afterEach(async () => {
    vi.restoreAllMocks();
    await Promise.all(stacks.splice(0).map((stack) => stack.close()));
  });

  it('shares one principal\'s count: 6 + 6 requests on two servers, 10 pass', async () => {
    await twoServers();
    const token = await a.session('ann');
    const send = (stack: TestStack, id: number) => stack.dispatcher.dispatch({ id, portal: '/fleet', gate: 'move' }, conn(token));
    const outcomes: string[] = [];
    for (let i = 0; i < 6; i++) outcomes.push(((await send(a, i)) as { ok: boolean }).ok ? 'ok' : 'limited');
    for (let i = 0; i < 6; i++) outcomes.push(((await send(b, i)) as { ok: boolean }).ok ? 'ok' : 'limited');
    expect(outcomes.filter((o) => o === 'ok')).toHaveLength(10);
    const refused = await send(b, 99);
    expect(refused).toMatchObject({ ok: false, error: { code: 'rate_limited', retryAfterMs: expect.any(Number) } });
    expect((refused as { error: { retryAfterMs: number } }).error.retryAfterMs).toBeGreaterThan(0);
    expect((refused as { error: { retryAfterMs: number } }).error.retryAfterMs).toBeLessThanOrEqual(60_000);
  });

  it('never lets more than the limit through under concurrency, and refuses a spent window without asking Redis', async () => {
    await twoServers();
    const token = await a.session('bo');
    const replies = await Promise.all(
      Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? a : b).dispatcher.dispatch({ id: i, portal: '/fleet', gate: 'move' }, conn(token, `c${i}`))),
    );
    expect(replies.filter((r) => r.ok)).toHaveLength(10);
    expect(replies.filter((r) => !r.ok).every((r) => !r.ok && r.error.code === 'rate_limited')).toBe(true);
    const increments = vi.spyOn(a.stores.cache, 'increment');
    for (let i = 0; i < 20; i++) expect(await a.dispatcher.dispatch({ id: i, portal: '/fleet', gate: 'move' }, conn(token))).toMatchObject({ ok: false });
    expect(increments).not.toHaveBeenCalled();
  });

  it('claims a tenth of the limit at a time: one Redis call per slice, at most a slice less than the limit stranded per server', async () => {
    await twoServers();
    const token = await a.session('cy');
    const increments = vi.spyOn(a.stores.cache, 'increment');
    let passed = 0;
    for (let i = 0; i < 22; i++) if ((await a.dispatcher.dispatch({ id: i, portal: '/fleet', gate: 'chat' }, conn(token))).ok) passed++;
    expect(passed).toBe(22);
    expect(increments).toHaveBeenCalledTimes(6); // slices of 4: 24 claimed, 2 left on this server
    for (let i = 0; i < 40; i++) if ((await b.dispatcher.dispatch({ id: i, portal: '/fleet', gate: 'chat' }, conn(token))).ok) passed++;
    expect(passed).toBeLessThanOrEqual(40);
    expect(passed).toBeGreaterThanOrEqual(40 - 3);
  });

  it('sizes a claim by the caller\'s use in the window before: a steady caller costs one Redis call per window, and the fleet still passes no more than the limit', async () => {
    await twoServers();
    const token = await a.session('eve');
    const untilNextWindow = () => new Promise((resolve) => setTimeout(resolve, rateLimitWindowEnd('FleetPortal.steer', 'p:eve', 2, Date.now()) - Date.now() + 5));
    const steer = async (stack: TestStack, times: number) => {
      let passed = 0;
      for (let i = 0; i < times; i++) if ((await stack.dispatcher.dispatch({ id: i, portal: '/fleet', gate: 'steer' }, conn(token))).ok) passed++;
      return passed;
    };
    const increments = vi.spyOn(a.stores.cache, 'increment');
    await untilNextWindow();
    expect(await steer(a, 12)).toBe(12);
    expect(increments).toHaveBeenCalledTimes(3); // nothing known yet: slices of 4
    increments.mockClear();
    await untilNextWindow();
    expect(await steer(a, 12)).toBe(12);
    expect(increments).toHaveBeenCalledTimes(1); // 12 used before: one claim of 15
    const onB = await steer(b, 40);
    expect(12 + onB).toBeLessThanOrEqual(40);
    expect(12 + onB).toBeGreaterThanOrEqual(40 - 3); // at most the 3 unused of a's claim stranded
  });

  it('shifts each caller\'s windows by an offset of its own, the same on every server, so callers do not all claim again in the same instant', async () => {
    await twoServers();
    const [ann, bo] = [await a.session('win-1'), await a.session('win-2')];
    const refusalOf = async (stack: TestStack, token: string) => {
      for (let i = 0; i < 11; i++) {
        const reply = await stack.dispatcher.dispatch({ id: i, portal: '/fleet', gate: 'move' }, conn(token));
        if (!reply.ok) return { at: Date.now(), retryAfterMs: (reply as { error: { retryAfterMs: number } }).error.retryAfterMs };
      }
      throw new Error('never refused');
    };
    const endOf = (refusal: { at: number; retryAfterMs: number }) => refusal.at + refusal.retryAfterMs;
    const [annOnA, boOnA] = [await refusalOf(a, ann), await refusalOf(a, bo)];
    expect(Math.abs(endOf(annOnA) - rateLimitWindowEnd('FleetPortal.move', 'p:win-1', 60, annOnA.at))).toBeLessThanOrEqual(5);
    expect(Math.abs(endOf(boOnA) - rateLimitWindowEnd('FleetPortal.move', 'p:win-2', 60, boOnA.at))).toBeLessThanOrEqual(5);
    expect(Math.abs(endOf(annOnA) - endOf(boOnA))).toBeGreaterThan(1000); // their offsets are 7.1 s apart
    const annOnB = await refusalOf(b, ann); // the window is spent fleet-wide: b refuses at once, with the same end
    expect(Math.abs(endOf(annOnB) - endOf(annOnA))).toBeLessThanOrEqual(5);
  });

  it('counts a connection in its own server without asking Redis: a connection lives on one server', async () => {
    await twoServers();
    const token = await a.session('fay');
    const increments = vi.spyOn(a.stores.cache, 'increment');
    const wave = (stack: TestStack, clientId: string, id: number) => stack.dispatcher.dispatch({ id, portal: '/fleet', gate: 'wave' }, conn(token, clientId));
    const outcomes = [];
    for (let i = 0; i < 7; i++) outcomes.push((await wave(a, 'w1', i)).ok);
    expect(outcomes).toEqual([true, true, true, true, true, false, false]);
    expect(await wave(a, 'w2', 8)).toMatchObject({ ok: true }); // another connection, its own count
    expect(await wave(b, 'w1', 9)).toMatchObject({ ok: true }); // a connection of the same id on another server is another connection
    expect(increments).not.toHaveBeenCalled();
  });

  it('counts an anonymous caller by address across the fleet, and lets it through again in the next window', async () => {
    await twoServers();
    const knock = (stack: TestStack, id: number) => stack.dispatcher.dispatch({ id, portal: '/fleet', gate: 'knock' }, conn(undefined, `k${id}`));
    // Start at the beginning of a window, so the two requests and the refusal share it.
    await new Promise((resolve) => setTimeout(resolve, rateLimitWindowEnd('FleetPortal.knock', 'a:10.1.1.1', 1, Date.now()) - Date.now() + 5));
    expect(await knock(a, 1)).toMatchObject({ ok: true });
    expect(await knock(b, 2)).toMatchObject({ ok: true });
    const refused = await knock(a, 3);
    expect(refused).toMatchObject({ ok: false, error: { code: 'rate_limited' } });
    await new Promise((resolve) => setTimeout(resolve, (refused as { error: { retryAfterMs: number } }).error.retryAfterMs + 5));
    expect(await knock(b, 4)).toMatchObject({ ok: true });
  });

  it('answers unavailable when the counter cannot be reached, and lets nothing through unchecked', async () => {
    await twoServers();
    const token = await a.session('dee');
    vi.spyOn(a.stores.cache, 'increment').mockRejectedValue(storeUnavailable());
    expect(await a.dispatcher.dispatch({ id: 1, portal: '/fleet', gate: 'move' }, conn(token))).toMatchObject({ ok: false, error: { code: 'unavailable' } });
  });
});
