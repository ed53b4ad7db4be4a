import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { PortcullisError } from '../errors/portcullis-error.js';
import type { AccountStore } from './account-store.js';
import { InMemoryAccountStore } from './in-memory-account-store.js';
import { RedisAccountStore } from './redis-account-store.js';

const redisUrl = inject('redisUrl');
const hash = '$2b$04$abcdefghijklmnopqrstuuN6nSqKq6Yp5y1vQY6x8j1wqvJm7x0qa';

function contract(name: string, makeStore: () => Promise<AccountStore>) {
  describe(`${name} account store`, () => {
    it('creates an account with a storageId and finds it by id, username and email, ignoring case and spaces', async () => {
      const store = await makeStore();
      const ada = await store.create({ username: 'Ada', email: 'Ada@Example.com', passwordHash: hash });
      expect(ada.storageId).toMatch(/^[0-9a-f-]{36}$/);
      expect(ada).toMatchObject({ username: 'Ada', email: 'Ada@Example.com', passwordHash: hash });
      expect(await store.findById(ada.storageId)).toEqual(ada);
      expect(await store.findByUsername(' ada ')).toEqual(ada);
      expect(await store.findByEmail('ADA@example.COM')).toEqual(ada);
      expect(await store.findByUsername('bob')).toBeUndefined();
      expect(await store.findByEmail('bob@example.com')).toBeUndefined();
      expect(await store.findById(randomUUID())).toBeUndefined();
    });

    it('keeps a null password hash as null', async () => {
      const store = await makeStore();
      const external = await store.create({ username: 'ext', email: 'ext@example.com', passwordHash: null });
      expect((await store.findByUsername('ext'))?.passwordHash).toBeNull();
      expect(external.passwordHash).toBeNull();
    });

    it('refuses a taken username or email with conflict, whatever the case', async () => {
      const store = await makeStore();
      await store.create({ username: 'ada', email: 'ada@example.com', passwordHash: hash });
      await expect(store.create({ username: 'ADA', email: 'other@example.com', passwordHash: hash })).rejects.toMatchObject({ code: 'conflict' });
      await expect(store.create({ username: 'other', email: 'ADA@EXAMPLE.COM', passwordHash: hash })).rejects.toMatchObject({ code: 'conflict' });
      expect(await store.findByUsername('other')).toBeUndefined();
    });

    it('lets exactly one of 20 concurrent creates of one username win', async () => {
      const store = await makeStore();
      const attempts = Array.from({ length: 20 }, (_, i) => store.create({ username: 'racer', email: `racer${i}@example.com`, passwordHash: hash }));
      const outcomes = await Promise.allSettled(attempts);
      const won = outcomes.filter((o) => o.status === 'fulfilled');
      expect(won).toHaveLength(1);
      for (const lost of outcomes.filter((o) => o.status === 'rejected')) {
        expect((lost as PromiseRejectedResult).reason).toBeInstanceOf(PortcullisError);
        expect((lost as PromiseRejectedResult).reason.code).toBe('conflict');
      }
      expect((await store.findByUsername('racer'))?.storageId).toBe((won[0] as PromiseFulfilledResult<{ storageId: string }>).value.storageId);
    });
  });
}

contract('in-memory', async () => new InMemoryAccountStore());

describe.runIf(redisUrl !== null)('redis', () => {
  const opened: RedisAccountStore[] = [];
  afterAll(async () => {
    await Promise.all(opened.map((store) => store.close()));
  });
  contract('redis', async () => {
    const store = new RedisAccountStore({ url: redisUrl!, keyPrefix: `test-${randomUUID()}` });
    opened.push(store);
    await store.ready();
    return store;
  });

  it('answers unavailable when Redis cannot be reached', async () => {
    const store = new RedisAccountStore({ url: 'redis://127.0.0.1:1', operationTimeoutMs: 200 });
    opened.push(store);
    await expect(store.findByUsername('ada')).rejects.toMatchObject({ code: 'unavailable' });
    await expect(store.create({ username: 'ada', email: 'ada@example.com', passwordHash: hash })).rejects.toMatchObject({ code: 'unavailable' });
  });
});
