/**
 * The test stacks of `@portcullis/core/testing` are what their documentation says:
 * settings laid over the test defaults, a Redis stack that takes a URL and shares a
 * fleet by key prefix, and a stack that can be built on a Redis that is down.
 */
import { ConnectionRegistry, GateDispatcher } from '@portcullis/core';
import { createMemoryTestStack, createRedisTestStack, storeUnavailable, type TestStack } from '@portcullis/core/testing';
import { afterEach, describe, expect, inject, it } from 'vitest';

const redisUrl = inject('redisUrl');
const stacks: TestStack[] = [];
const keep = (stack: TestStack) => (stacks.push(stack), stack);

afterEach(async () => {
  await Promise.all(stacks.splice(0).map((stack) => stack.close()));
});

describe('createMemoryTestStack', () => {
  it('lays settings and SVC__ variables over the test defaults, never reading the process environment', async () => {
    process.env.SVC__SECURITY__ISSUER = 'from-the-process';
    try {
      const stack = keep(await createMemoryTestStack({
        security: { lockout: { 'max-failures': 3 } },
        env: { SVC__SECURITY__LOCKOUT__LOCK_MINUTES: '7' },
      }));
      expect(stack.config.security.mode).toBe('jwt');
      expect(stack.config.security.password.workFactor).toBe(4);
      expect(stack.config.security.lockout).toMatchObject({ maxFailures: 3, lockMinutes: 7, store: 'memory' });
      expect(stack.config.security.issuer).not.toBe('from-the-process');
      expect(stack.stores.cache.provider).toBe('inmemory');
    } finally {
      delete process.env.SVC__SECURITY__ISSUER;
    }
  });

  it('hands out the one dispatcher and registry of its container, and tokens that pass the shields', async () => {
    const stack = keep(await createMemoryTestStack());
    expect(stack.container.resolve(GateDispatcher)).toBe(stack.dispatcher);
    expect(stack.container.resolve(ConnectionRegistry)).toBe(stack.registry);
    expect(await stack.sessions.validate(await stack.session('player-1', { role: 'admin' }))).toMatchObject({ id: 'player-1', roles: ['admin'] });
    const admission = await stack.dispatcher.admit({ transport: 'ws', credential: stack.jwt('player-2'), clientId: 'c', remoteAddress: undefined });
    expect(admission).toMatchObject({ ok: true, principal: { id: 'player-2' } });
  });

  it('gives storeUnavailable, the error of a store that cannot be reached', () => {
    expect(storeUnavailable()).toMatchObject({ code: 'unavailable' });
  });
});

describe('createRedisTestStack', () => {
  it('needs a redis:// URL', () => {
    expect(() => createRedisTestStack('localhost:6379')).toThrow(TypeError);
  });

  it('builds on a Redis that is down when told not to wait for it', async () => {
    const stack = keep(await createRedisTestStack('redis://127.0.0.1:1', { waitForStore: false }));
    await expect(stack.sessions.validate(`${crypto.randomUUID()};session`)).rejects.toMatchObject({ code: 'unavailable' });
  });

  it.runIf(redisUrl)('keeps lockout on the backplane, and two stacks with one key prefix are one fleet', async () => {
    const a = keep(await createRedisTestStack(redisUrl!, { security: { lockout: { 'max-failures': 2 } } }));
    const b = keep(await createRedisTestStack(redisUrl!, { keyPrefix: a.keyPrefix }));
    expect(a.config.security.lockout).toMatchObject({ store: 'backplane', maxFailures: 2 });
    const token = await a.session('player-3');
    expect(await b.sessions.validate(token)).toMatchObject({ id: 'player-3' });
    await b.sessions.revoke(token);
    expect(await a.sessions.validate(token)).toBeUndefined();
  });
});
