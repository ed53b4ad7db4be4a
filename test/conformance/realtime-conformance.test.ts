/**
 * The one conformance suite of shield and protocol cases, run against WebSocket,
 * TCP and UDP through a driver per transport; then the fleet cases on two servers
 * sharing one Redis, on a single server, a cluster and a sentinel set (skipped, loudly,
 * when no redis-server is installed outside CI).
 */
import { JwtTokenIssuer } from '@portcullis/core';
import { afterEach, beforeEach, describe, expect, inject, it } from 'vitest';
import { createMemoryTestStack, createRedisTestStack, type TestStack } from '@portcullis/core/testing';
import { everyRedisTopology } from '../support/redis-topologies.js';
import { SECRET_DETAIL, TestGamePortal } from './support/test-portal.js';
import { tcpDriver, udpDriver, wsDriver, type RealtimeClient, type TransportDriver } from './support/transport-drivers.js';

const redisUrl = inject('redisUrl');
const drivers: Array<[string, () => TransportDriver]> = [
  ['ws', wsDriver],
  ['tcp', tcpDriver],
  ['udp', udpDriver],
];

/** Over UDP a revoked credential shows at the next datagram; elsewhere the socket closes. */
async function expectRevoked(driver: TransportDriver, client: RealtimeClient, gate: 'move' | 'whoami'): Promise<void> {
  if (driver.connectionOriented) {
    const closed = await client.closed;
    if (driver.name === 'ws') expect(closed.code).toBe(4401);
    expect(client.inbox.all).toContainEqual({ type: 'auth', ok: false, error: { code: 'unauthorized', message: expect.any(String) } });
    return;
  }
  await expect
    .poll(async () => (await client.request('/game', gate, { x: 1, y: 1 })).error?.code, { timeout: 3000 })
    .toBe('unauthorized');
}

describe.each(drivers)('%s transport conformance', (_name, makeDriver) => {
  let stack: TestStack;
  let driver: TransportDriver;
  const clients: RealtimeClient[] = [];
  const connect = async (token?: string) => {
    const client = await driver.connect(token);
    clients.push(client);
    return client;
  };

  beforeEach(async () => {
    stack = await createMemoryTestStack({ portals: [TestGamePortal] });
    driver = makeDriver();
    await driver.start(stack);
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
    await driver.stop();
    await stack.close();
  });

  it('answers an unshielded gate without any credential', async () => {
    const client = await connect();
    expect(await client.request('/game', 'ping')).toEqual({ id: expect.any(Number), ok: true, data: 'pong' });
  });

  it('answers a session-shielded gate for a live session, acting for its principal', async () => {
    const client = await connect(await stack.session('alice'));
    expect(await client.request('/game', 'move', { x: 3, y: 4 })).toMatchObject({ ok: true, data: { x: 3, y: 4, by: 'alice' } });
  });

  it('refuses a session-shielded gate without a session, or with a JWT instead', async () => {
    const anonymous = await connect();
    expect(await anonymous.request('/game', 'move', { x: 1, y: 1 })).toMatchObject({ ok: false, error: { code: 'unauthorized' } });
    const withJwt = await connect(stack.jwt('bob'));
    expect(await withJwt.request('/game', 'move', { x: 1, y: 1 })).toMatchObject({ ok: false, error: { code: 'unauthorized' } });
  });

  it('answers a JWT-shielded gate for a JWT and refuses a session token or no credential', async () => {
    const withJwt = await connect(stack.jwt('carol'));
    expect(await withJwt.request('/game', 'whoami')).toMatchObject({ ok: true, data: 'carol' });
    const withSession = await connect(await stack.session('dave'));
    expect(await withSession.request('/game', 'whoami')).toMatchObject({ ok: false, error: { code: 'unauthorized' } });
    const anonymous = await connect();
    expect(await anonymous.request('/game', 'whoami')).toMatchObject({ ok: false, error: { code: 'unauthorized' } });
  });

  it('applies a custom shield: through, forbidden, or unauthorized', async () => {
    const vip = await connect(stack.jwt('erin', { vip: true }));
    expect(await vip.request('/game', 'vip')).toMatchObject({ ok: true, data: 'welcome erin' });
    const regular = await connect(stack.jwt('frank'));
    expect(await regular.request('/game', 'vip')).toMatchObject({ ok: false, error: { code: 'forbidden', message: 'members only' } });
    const anonymous = await connect();
    expect(await anonymous.request('/game', 'vip')).toMatchObject({ ok: false, error: { code: 'unauthorized' } });
  });

  it('answers not_found for an unknown portal or gate', async () => {
    const client = await connect(await stack.session('alice'));
    expect(await client.request('/nowhere', 'ping')).toMatchObject({ ok: false, error: { code: 'not_found' } });
    expect(await client.request('/game', 'teleport')).toMatchObject({ ok: false, error: { code: 'not_found' } });
  });

  it('answers bad_request, with the id, for an object that is not a request', async () => {
    const client = await connect();
    client.sendRaw(JSON.stringify({ id: 41, portal: 7, gate: ['ping'], pad: 'x'.repeat(200) }));
    expect(await client.inbox.take((f) => (f as { id?: number }).id === 41)).toMatchObject({ ok: false, error: { code: 'bad_request' } });
  });

  it('handles a malformed frame without harm (bad_request with id null; UDP ignores garbage)', async () => {
    const client = await connect();
    client.sendRaw('{"id": 1, "portal": ');
    client.sendRaw('[1,2,3]');
    if (driver.connectionOriented) {
      expect(await client.inbox.take()).toMatchObject({ id: null, ok: false, error: { code: 'bad_request' } });
      expect(await client.inbox.take()).toMatchObject({ id: null, ok: false, error: { code: 'bad_request' } });
    } else {
      expect(await client.inbox.quietFor(150)).toBe(true);
    }
    expect(await client.request('/game', 'ping')).toMatchObject({ ok: true, data: 'pong' });
  });

  it('answers internal for a handler that throws, leaks nothing, and keeps serving', async () => {
    const client = await connect();
    const reply = await client.request('/game', 'boom');
    expect(reply).toMatchObject({ ok: false, error: { code: 'internal' } });
    expect(JSON.stringify(reply)).not.toContain('hunter2');
    expect(JSON.stringify(client.inbox.all)).not.toContain(SECRET_DETAIL);
    expect(await client.request('/game', 'ping')).toMatchObject({ ok: true, data: 'pong' });
  });

  it('refuses a revoked session at its next message (socket left open when the revocation event never reaches this server)', async () => {
    await driver.stop();
    driver = makeDriver();
    await driver.start(stack, { deafRegistry: true });
    const token = await stack.session('grace');
    const client = await connect(token);
    expect(await client.request('/game', 'move', { x: 1, y: 2 })).toMatchObject({ ok: true });
    await stack.sessions.revoke(token);
    expect(await client.request('/game', 'move', { x: 1, y: 2 })).toMatchObject({ ok: false, error: { code: 'unauthorized' } });
    expect(await client.request('/game', 'ping')).toMatchObject({ ok: true, data: 'pong' });
  });

  it('refuses a JWT at its next message once it is logged out, even when the event never reaches this server', async () => {
    await driver.stop();
    driver = makeDriver();
    await driver.start(stack, { deafRegistry: true });
    const jwt = stack.jwt('heidi');
    const client = await connect(jwt);
    expect(await client.request('/game', 'whoami')).toMatchObject({ ok: true, data: 'heidi' });
    await stack.sessions.revoke(jwt);
    expect(await client.request('/game', 'whoami')).toMatchObject({ ok: false, error: { code: 'unauthorized' } });
  });

  it('ends a revoked session: closes its socket (4401 on WebSocket) or refuses its next datagram', async () => {
    const token = await stack.session('ivan');
    const client = await connect(token);
    const bystander = await connect(await stack.session('judy'));
    expect(await client.request('/game', 'move', { x: 0, y: 0 })).toMatchObject({ ok: true });
    await stack.sessions.revoke(token);
    await expectRevoked(driver, client, 'move');
    expect(await bystander.request('/game', 'move', { x: 5, y: 5 })).toMatchObject({ ok: true, data: { by: 'judy' } });
  });

  it('ends a connection authenticated with a JWT once that JWT is upgraded, and accepts the session instead', async () => {
    const jwt = stack.jwt('olivia');
    const client = await connect(jwt);
    expect(await client.request('/game', 'whoami')).toMatchObject({ ok: true, data: 'olivia' });
    const session = await stack.sessions.upgrade(jwt);
    await expectRevoked(driver, client, 'whoami');
    const upgraded = await connect(session.accessToken);
    expect(await upgraded.request('/game', 'move', { x: 2, y: 2 })).toMatchObject({ ok: true, data: { by: 'olivia' } });
  });

  it('ends a connection holding any JWT of a login whose family is revoked (logout with its refresh token)', async () => {
    const login = stack.container.resolve(JwtTokenIssuer).issueLoginPair('walter');
    const client = await connect(login.accessToken);
    expect(await client.request('/game', 'whoami')).toMatchObject({ ok: true, data: 'walter' });
    await stack.sessions.revoke(login.refreshToken);
    await expectRevoked(driver, client, 'whoami');
  });

  it('ends every connection of a principal on revokeAllFor', async () => {
    const first = await connect(await stack.session('mallory'));
    const second = await connect(await stack.session('mallory'));
    expect(await first.request('/game', 'move', { x: 0, y: 0 })).toMatchObject({ ok: true });
    expect(await second.request('/game', 'move', { x: 0, y: 0 })).toMatchObject({ ok: true });
    await stack.sessions.revokeAllFor('mallory');
    await expectRevoked(driver, first, 'move');
    await expectRevoked(driver, second, 'move');
  });
});

for (const { name, env: found } of everyRedisTopology()) describe.skipIf(!found)(`fleet on one Redis (${name})${found ? '' : ' — SKIPPED, redis-server not found'}`, () => {
  const env = found ?? {};
  describe.each(drivers)('%s transport', (_name, makeDriver) => {
    let serverA: TestStack;
    let serverB: TestStack;
    let driver: TransportDriver;
    let client: RealtimeClient | undefined;

    beforeEach(async () => {
      serverA = await createRedisTestStack(redisUrl!, { portals: [TestGamePortal], env });
      serverB = await createRedisTestStack(redisUrl!, { portals: [TestGamePortal], keyPrefix: serverA.keyPrefix, env });
      driver = makeDriver();
      await driver.start(serverA);
    });
    afterEach(async () => {
      await client?.close();
      await driver.stop();
      await serverB.close();
      await serverA.close();
    });

    it('accepts a session upgraded on another server', async () => {
      client = await driver.connect(await serverB.session('oscar'));
      expect(await client.request('/game', 'move', { x: 9, y: 9 })).toMatchObject({ ok: true, data: { by: 'oscar' } });
    });

    it('ends a session revoked on another server', async () => {
      const token = await serverB.session('peggy');
      client = await driver.connect(token);
      expect(await client.request('/game', 'move', { x: 1, y: 1 })).toMatchObject({ ok: true });
      await serverB.sessions.revoke(token);
      await expectRevoked(driver, client, 'move');
    });

    it('refuses, at its next message, a JWT logged out on another server', async () => {
      const jwt = serverA.jwt('trent');
      client = await driver.connect(jwt);
      expect(await client.request('/game', 'whoami')).toMatchObject({ ok: true, data: 'trent' });
      await serverB.sessions.revoke(jwt);
      await expectRevoked(driver, client, 'whoami');
    });

    it('ends a JWT connection when its login family is revoked on another server', async () => {
      const login = serverA.container.resolve(JwtTokenIssuer).issueLoginPair('victor');
      client = await driver.connect(login.accessToken);
      expect(await client.request('/game', 'whoami')).toMatchObject({ ok: true, data: 'victor' });
      await serverB.sessions.revoke(login.refreshToken);
      await expectRevoked(driver, client, 'whoami');
    });

    it('ends a JWT connection when that JWT is upgraded on another server', async () => {
      const jwt = serverA.jwt('ursula');
      client = await driver.connect(jwt);
      expect(await client.request('/game', 'whoami')).toMatchObject({ ok: true, data: 'ursula' });
      await serverB.sessions.upgrade(jwt);
      await expectRevoked(driver, client, 'whoami');
    });
  });
});
