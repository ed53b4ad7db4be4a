/**
 * Degrade, do not spiral: requests read while the server's event loop is far
 * behind are answered `overloaded` at once, with a retry hint, their shield and
 * handler not run; as soon as the loop catches up, requests are served again.
 */
import { ShieldEnforcer } from '@portcullis/core';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createMemoryTestStack, type TestStack } from '@portcullis/core/testing';
import { stall } from '../support/event-loop.js';
import { TestGamePortal } from './support/test-portal.js';
import { tcpDriver, udpDriver, wsDriver, type RealtimeClient, type TransportDriver } from './support/transport-drivers.js';

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
    stack = await createMemoryTestStack({ portals: [TestGamePortal] });
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
