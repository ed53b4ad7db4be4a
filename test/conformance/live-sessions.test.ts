/**
 * Sessions outlive their tokens on live connections: a session refresh (over the API or
 * in band) moves every connection of the old access token to the new pair, on every
 * server; a second auth frame of the same principal replaces a connection's token; only
 * revocations close sockets. Run on WebSocket and TCP, in memory (one server) and with two
 * servers on a real Redis server, Redis Cluster and Sentinel set, where A and B are different
 * processes' worth of stacks.
 */
import { randomBytes } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, inject, it } from 'vitest';
import { sessionKey } from '@portcullis/core';
import { createMemoryTestStack, createRedisTestStack, type TestStack } from '@portcullis/core/testing';
import { everyRedisTopology, type RedisUnderTest } from '../support/redis-topologies.js';
import { rawPublisher } from './support/raw-publisher.js';
import { TestGamePortal } from './support/test-portal.js';
import { tcpDriver, wsDriver, type RealtimeClient, type TransportDriver } from './support/transport-drivers.js';

const redisUrl = inject('redisUrl');
const drivers: Array<[string, () => TransportDriver]> = [
  ['ws', wsDriver],
  ['tcp', tcpDriver],
];
/** One server in memory; two servers on each Redis topology (undefined: this run has none). */
const fleets: Array<[string, RedisUnderTest | undefined, boolean]> = [
  ['in memory, one server', undefined, true],
  ...everyRedisTopology().map(({ name, env }): [string, RedisUnderTest | undefined, boolean] => [`on Redis (${name}), two servers${env ? '' : ' — SKIPPED, redis-server not found'}`, env && { name, env }, env !== undefined]),
];

interface Server {
  readonly stack: TestStack;
  readonly driver: TransportDriver;
}

async function expectClosedAsRevoked(driver: TransportDriver, client: RealtimeClient): Promise<void> {
  const closed = await client.closed;
  if (driver.name === 'ws') expect(closed.code).toBe(4401);
  expect(client.inbox.all).toContainEqual({ type: 'auth', ok: false, error: { code: 'unauthorized', message: expect.any(String) } });
}

const isFrame = (type: string) => (frame: unknown) => (frame as { type?: string }).type === type;

describe.each(fleets)('live sessions %s', (_fleet, redis, available) => {
  describe.skipIf(!available).each(drivers)('%s transport', (_name, makeDriver) => {
    let a: Server;
    let b: Server;
    const clients: RealtimeClient[] = [];
    const connect = async (server: Server, token: string) => {
      const client = await server.driver.connect(token);
      clients.push(client);
      return client;
    };
    const session = async (stack: TestStack, sub: string) => {
      const login = stack.issuer.issueLoginPair(sub, { name: sub });
      await stack.sessions.recordLogin(sub, login.familyId, { ip: '203.0.113.7', userAgent: 'test' });
      return { login, session: await stack.sessions.upgrade(login.accessToken) };
    };
    const inBand = async (client: RealtimeClient, frame: unknown, type: 'refresh' | 'auth') => {
      client.sendRaw(JSON.stringify(frame));
      return client.inbox.take(isFrame(type)) as Promise<Record<string, unknown>>;
    };

    beforeEach(async () => {
      const first = redis ? await createRedisTestStack(redisUrl!, { portals: [TestGamePortal], env: redis.env }) : await createMemoryTestStack({ portals: [TestGamePortal] });
      a = { stack: first, driver: makeDriver() };
      await a.driver.start(first);
      if (redis) {
        const second = await createRedisTestStack(redisUrl!, { portals: [TestGamePortal], keyPrefix: first.keyPrefix, env: redis.env });
        b = { stack: second, driver: makeDriver() };
        await b.driver.start(second);
      } else {
        b = a;
      }
    });
    afterEach(async () => {
      await Promise.all(clients.splice(0).map((client) => client.close()));
      for (const server of new Set([a, b])) {
        await server.driver.stop();
        await server.stack.close();
      }
    });

    it('a refresh on server A keeps the socket on server B open, now under the new pair', async () => {
      const { session: first } = await session(a.stack, 'alice');
      const client = await connect(b, first.accessToken);
      const next = await a.stack.sessions.refresh(first.refreshToken);
      if (next.kind !== 'session') throw new Error('expected a session pair');
      expect(await client.request('/game', 'move', { x: 1, y: 2 })).toMatchObject({ ok: true, data: { by: 'alice' } });
      expect(client.inbox.all).not.toContainEqual(expect.objectContaining({ type: 'auth', ok: false }));
      // Indexed by the new token now: revoking the new pair closes it.
      await a.stack.sessions.revokePair(next.session.accessToken);
      await expectClosedAsRevoked(b.driver, client);
    });

    // Without the victim's token no one can seal for it: neither the clear shape of older
    // releases nor a seal under another token moves the socket onto the forger's session.
    const forgeries: Array<[string, (attackerToken: string) => Record<string, string>]> = [
      ['in the clear', (attackerToken) => ({ to: attackerToken })],
      ['sealed under another token', () => ({ sealed: Buffer.alloc(60, 7).toString('base64url') })],
      ['in the 43-character form of a token seal, not made under the victim\'s token', () => ({ sealed: randomBytes(32).toString('base64url') })],
    ];
    // Only a fleet has a channel to forge on.
    if (redis) it.each(forgeries)('a forged successor %s on the channel cannot move a socket onto another session: it closes', async (_shape, forge) => {
      const { session: victim } = await session(a.stack, 'victor');
      const { session: attacker } = await session(a.stack, 'mallory');
      const client = await connect(b, victim.accessToken);
      const raw = await rawPublisher(redis!);
      try {
        const from = sessionKey(victim.accessToken);
        const event = { kind: 'revoked', sessionKeys: [from], jtis: [], successors: [{ from, ...forge(attacker.accessToken) }] };
        await raw.publish(`${a.stack.keyPrefix}:revocations`, JSON.stringify({ o: 'forger', e: event }));
      } finally {
        await raw.close();
      }
      await expectClosedAsRevoked(b.driver, client);
    });

    it('answers an in-band refresh with the new pair; every socket of the old token, on both servers, goes on', async () => {
      const { session: first } = await session(a.stack, 'bob');
      const here = await connect(a, first.accessToken);
      const there = await connect(b, first.accessToken);
      const reply = await inBand(here, { type: 'refresh', token: first.refreshToken }, 'refresh');
      expect(reply).toEqual({
        type: 'refresh', ok: true,
        accessToken: expect.stringMatching(/;session$/), refreshToken: expect.stringMatching(/;session$/),
        accessExpiration: expect.any(String), refreshExpiration: expect.any(String),
        udpKey: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      });
      expect(reply['accessToken']).not.toBe(first.accessToken);
      expect(await a.stack.sessions.validate(first.accessToken)).toBeUndefined();
      expect(await here.request('/game', 'move', { x: 3, y: 3 })).toMatchObject({ ok: true, data: { by: 'bob' } });
      expect(await there.request('/game', 'move', { x: 4, y: 4 })).toMatchObject({ ok: true, data: { by: 'bob' } });
      // A logout of the new pair (the only revocation here) closes both.
      await b.stack.sessions.revoke(reply['accessToken'] as string);
      await expectClosedAsRevoked(a.driver, here);
      await expectClosedAsRevoked(b.driver, there);
    });

    it('refuses another principal\'s refresh token with forbidden and rotates nothing', async () => {
      const { session: mine } = await session(a.stack, 'carol');
      const { session: theirs } = await session(a.stack, 'dave');
      const client = await connect(b, mine.accessToken);
      const reply = await inBand(client, { type: 'refresh', token: theirs.refreshToken }, 'refresh');
      expect(reply).toMatchObject({ type: 'refresh', ok: false, error: { code: 'forbidden' } });
      expect(await a.stack.sessions.validate(theirs.accessToken)).toMatchObject({ id: 'dave' });
      expect(await a.stack.sessions.refresh(theirs.refreshToken)).toMatchObject({ kind: 'session' });
      expect(await client.request('/game', 'move', { x: 5, y: 5 })).toMatchObject({ ok: true, data: { by: 'carol' } });
    });

    it('leaves the connection as it was after a failed refresh', async () => {
      const { session: first } = await session(a.stack, 'erin');
      const client = await connect(b, first.accessToken);
      const reply = await inBand(client, { type: 'refresh', token: '00000000-0000-4000-8000-000000000000;session' }, 'refresh');
      expect(reply).toMatchObject({ type: 'refresh', ok: false, error: { code: 'unauthorized' } });
      expect(await inBand(client, { type: 'refresh', token: 42 }, 'refresh')).toMatchObject({ ok: false, error: { code: 'bad_request' } });
      expect(await client.request('/game', 'move', { x: 6, y: 6 })).toMatchObject({ ok: true, data: { by: 'erin' } });
      await a.stack.sessions.revoke(first.accessToken);
      await expectClosedAsRevoked(b.driver, client);
    });

    it('answers requests sent right behind a refresh frame under the new pair, in order', async () => {
      const { session: first } = await session(a.stack, 'fay');
      const client = await connect(b, first.accessToken);
      client.inbox.all.length = 0;
      client.sendRaw(JSON.stringify({ type: 'refresh', token: first.refreshToken }));
      const replies = await Promise.all([1, 2, 3].map((x) => client.request('/game', 'move', { x, y: 0 })));
      expect(replies.map((r) => r.ok)).toEqual([true, true, true]);
      const order = client.inbox.all.map((f) => (f as { type?: string; id?: number }).type ?? 'reply');
      expect(order[0]).toBe('refresh');
    });

    it('replaces a connection\'s JWT with a fresh one of the same principal; another principal\'s is forbidden', async () => {
      const old = a.stack.issuer.issueLoginPair('gus', { name: 'gus' });
      const fresh = a.stack.issuer.issueLoginPair('gus', { name: 'gus' });
      const client = await connect(b, old.accessToken);
      expect(await inBand(client, { type: 'auth', token: a.stack.jwt('mallory') }, 'auth')).toMatchObject({ ok: false, error: { code: 'forbidden' } });
      expect(await client.request('/game', 'whoami')).toMatchObject({ ok: true, data: 'gus' });
      client.inbox.all.length = 0;
      expect(await inBand(client, { type: 'auth', token: fresh.accessToken }, 'auth')).toEqual({ type: 'auth', ok: true });
      // The old login's logout no longer concerns this connection; the new one's does.
      await a.stack.sessions.revoke(old.accessToken);
      expect(await client.request('/game', 'whoami')).toMatchObject({ ok: true, data: 'gus' });
      await a.stack.sessions.revoke(fresh.accessToken);
      await expectClosedAsRevoked(b.driver, client);
    });

    it('takes a reused session refresh token (grace 0) for theft: the successor\'s sockets close', async () => {
      const { session: first } = await session(a.stack, 'hank');
      const client = await connect(b, first.accessToken);
      expect(await inBand(client, { type: 'refresh', token: first.refreshToken }, 'refresh')).toMatchObject({ ok: true });
      await expect(a.stack.sessions.refresh(first.refreshToken)).rejects.toMatchObject({ code: 'invalid_token' });
      await expectClosedAsRevoked(b.driver, client);
    });

    it('a deleted login on server B closes its socket on server A', async () => {
      const { login, session: first } = await session(a.stack, 'ivy');
      const { session: other } = await session(a.stack, 'ivy');
      const doomed = await connect(a, first.accessToken);
      const kept = await connect(a, other.accessToken);
      const caller = { principalId: 'ivy', familyId: undefined };
      const listed = await b.stack.sessions.listLogins(caller);
      expect(listed).toHaveLength(2);
      const target = listed.find((entry) => entry.id !== undefined && entry.createdAt !== undefined && entry.upgraded)!;
      const id = (await b.stack.sessions.listLogins({ principalId: 'ivy', familyId: login.familyId })).find((entry) => entry.current)!.id;
      expect(target.upgraded).toBe(true);
      expect(await b.stack.sessions.endLogin(caller, id)).toBe(true);
      await expectClosedAsRevoked(a.driver, doomed);
      expect(await kept.request('/game', 'move', { x: 7, y: 7 })).toMatchObject({ ok: true, data: { by: 'ivy' } });
      await expect(a.stack.sessions.refresh(login.refreshToken)).rejects.toMatchObject({ code: 'invalid_token' });
      expect(await b.stack.sessions.listLogins(caller)).toHaveLength(1);
    });
  });
});
