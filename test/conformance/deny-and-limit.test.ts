/**
 * Deny by default and `@RateLimit` on every real-time transport (WebSocket, TCP,
 * UDP) over real sockets: `shields:fallback` guards the gates that declare no
 * shield, `@AllowAnonymous` keeps a gate open, and a caller over a gate's limit is
 * answered `rate_limited` with a retry hint while its connection stays open.
 */
import 'reflect-metadata';
import { AllowAnonymous, Gate, Portal, RateLimit, SessionShield } from '@portcullis/core';
import { createMemoryTestStack, type TestStack } from '@portcullis/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { tcpDriver, udpDriver, wsDriver, type RealtimeClient, type TransportDriver } from './support/transport-drivers.js';

@Portal('/game')
class DenyPortal {
  @Gate('time') time() {
    return { now: 1 };
  }

  @AllowAnonymous
  @Gate('ping') ping() {
    return 'pong';
  }

  @SessionShield
  @RateLimit({ limit: 3, windowSeconds: 60 })
  @Gate('move') move(data: unknown) {
    return data;
  }

  @AllowAnonymous
  @RateLimit({ limit: 2, windowSeconds: 60, by: 'connection' })
  @Gate('shout') shout() {
    return 'heard';
  }
}

const drivers: Array<[string, () => TransportDriver]> = [
  ['ws', wsDriver],
  ['tcp', tcpDriver],
  ['udp', udpDriver],
];

describe.each(drivers)('%s: deny by default and rate limits', (_name, makeDriver) => {
  let stack: TestStack;
  let driver: TransportDriver;
  const clients: RealtimeClient[] = [];
  const start = async (env: Record<string, string> = {}) => {
    stack = await createMemoryTestStack({ portals: [DenyPortal], env });
    driver = makeDriver();
    await driver.start(stack);
  };
  const connect = async (token?: string) => {
    const client = await driver.connect(token);
    clients.push(client);
    return client;
  };
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
    await driver.stop();
    await stack.close();
  });

  it('with fallback session, refuses a gate without a shield to an anonymous or JWT caller and answers a session; @AllowAnonymous stays open', async () => {
    await start({ SVC__SECURITY__SHIELDS__FALLBACK: 'session' });
    const anonymous = await connect();
    expect(await anonymous.request('/game', 'time')).toMatchObject({ ok: false, error: { code: 'unauthorized' } });
    expect(await anonymous.request('/game', 'ping')).toMatchObject({ ok: true, data: 'pong' });
    const withJwt = await connect(stack.jwt('ann'));
    expect(await withJwt.request('/game', 'time')).toMatchObject({ ok: false, error: { code: 'unauthorized' } });
    const withSession = await connect(await stack.session('ann'));
    expect(await withSession.request('/game', 'time')).toMatchObject({ ok: true, data: { now: 1 } });
  });

  it('with the default fallback none, a gate without a shield answers anyone', async () => {
    await start();
    expect(await (await connect()).request('/game', 'time')).toMatchObject({ ok: true, data: { now: 1 } });
  });

  it('answers rate_limited with retryAfterMs past the limit, per principal, and keeps the connection open', async () => {
    await start();
    const token = await stack.session('bo');
    const client = await connect(token);
    for (let i = 0; i < 3; i++) expect(await client.request('/game', 'move', { x: i })).toMatchObject({ ok: true, data: { x: i } });
    const refused = await client.request('/game', 'move', { x: 9 });
    expect(refused).toEqual({ id: expect.any(Number), ok: false, error: { code: 'rate_limited', message: 'too many requests; retry later', retryAfterMs: expect.any(Number) } });
    expect(refused.error!.retryAfterMs).toBeGreaterThan(0);
    expect(refused.error!.retryAfterMs).toBeLessThanOrEqual(60_000);
    // the same principal on a second connection shares the count; the first connection still answers
    expect(await (await connect(token)).request('/game', 'move', { x: 10 })).toMatchObject({ ok: false, error: { code: 'rate_limited' } });
    expect(await client.request('/game', 'ping')).toMatchObject({ ok: true, data: 'pong' });
    expect(await (await connect(await stack.session('cy'))).request('/game', 'move', { x: 1 })).toMatchObject({ ok: true });
  });

  it('counts by connection with by: connection', async () => {
    await start();
    const first = await connect();
    const answers = [await first.request('/game', 'shout'), await first.request('/game', 'shout'), await first.request('/game', 'shout')];
    expect(answers.map((a) => a.ok)).toEqual([true, true, false]);
    expect(await (await connect()).request('/game', 'shout')).toMatchObject({ ok: true });
  });
});
