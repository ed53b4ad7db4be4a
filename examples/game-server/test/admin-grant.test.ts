/**
 * Who gets the role `admin` in the example: never whoever signs up first under a name in
 * `ADMIN_USERS`, only the account the operator made with `ADMIN_PASSWORD_HASH`. Real HTTP,
 * in memory and on a real Redis (where an account can exist before the server starts).
 */
import 'reflect-metadata';
import { randomBytes, randomUUID } from 'node:crypto';
import bcrypt from 'bcrypt';
import type { Logger, LoggerFactory } from '@portcullis/core';
import { describe, expect, inject, it } from 'vitest';
import { parseAdminUsers } from '../src/admin-users.js';
import { startExampleServer, type Caller, type ExampleServerOptions } from './support/example-server.js';

const redisUrl = inject('redisUrl');
const OPERATOR_PASSWORD = 'the operator chose this one';
const KEY = randomBytes(32).toString('base64');

async function withServer<T>(options: ExampleServerOptions, run: (call: Caller) => Promise<T>): Promise<T> {
  const example = await startExampleServer({ ...options, env: { SVC__SECURITY__KEY: KEY, ...options.env } });
  try {
    return await run(example.call);
  } finally {
    await example.close();
  }
}

describe('the admin role in the example', () => {
  it('a stranger who signs up first under a name in ADMIN_USERS does not get admin', async () => {
    await withServer({ adminUsers: parseAdminUsers('root') }, async (call) => {
      const signup = await call('POST', '/auth/signup', { email: 'root@example.com', username: 'root', password: 'attacker password' });
      expect(signup.status).toBe(201);
      expect((await call('GET', '/api/admin', undefined, signup.json.accessToken)).status).toBe(403);
    });
  });

  it('with ADMIN_PASSWORD_HASH the operator owns the name from start-up: signing it up is refused, and only its password gets admin', async () => {
    const adminPasswordHash = await bcrypt.hash(OPERATOR_PASSWORD, 4);
    await withServer({ adminUsers: parseAdminUsers('Root, ops'), adminPasswordHash }, async (call) => {
      expect((await call('POST', '/auth/signup', { email: 'root@example.com', username: 'ROOT', password: 'attacker password' })).status).toBe(409);
      expect((await call('POST', '/auth/login/unamepwd', { username: 'root', password: 'attacker password' })).status).toBe(401);
      const login = await call('POST', '/auth/login/unamepwd', { username: 'root', password: OPERATOR_PASSWORD });
      expect(login.status).toBe(200);
      expect(await call('GET', '/api/admin', undefined, login.json.accessToken)).toMatchObject({ status: 200, json: { admin: 'root' } });
      const player = await call('POST', '/auth/signup', { email: 'pixel@example.com', username: 'pixel', password: 'correct horse battery' });
      expect((await call('GET', '/api/admin', undefined, player.json.accessToken)).status).toBe(403);
    });
  });

  it('refuses to start with an ADMIN_PASSWORD_HASH that is not a bcrypt hash', async () => {
    await expect(withServer({ adminUsers: parseAdminUsers('root'), adminPasswordHash: 'plain text' }, async () => undefined)).rejects.toThrow(/ADMIN_PASSWORD_HASH/);
  });

  it.runIf(redisUrl !== null)('on a persistent account store, a name a stranger took before the operator listed it gets no admin, and start-up says so', async () => {
    const env = { SVC__PERSISTENCE__CACHE__PROVIDER: 'redis', SVC__PERSISTENCE__CACHE__URL: redisUrl ?? '' };
    const name = `chief-${randomUUID().slice(0, 8)}`;
    await withServer({ env }, async (call) => {
      expect((await call('POST', '/auth/signup', { email: `${name}@example.com`, username: name, password: 'attacker password' })).status).toBe(201);
    });
    const warnings: string[] = [];
    const note = (message: string, fields?: Record<string, unknown>) => void warnings.push(`${message} ${JSON.stringify(fields ?? {})}`);
    const logger = { debug() {}, info() {}, warn: note, error: note } as Logger;
    const loggers: LoggerFactory = { create: () => logger };
    const adminPasswordHash = await bcrypt.hash(OPERATOR_PASSWORD, 4);
    await withServer({ env, adminUsers: parseAdminUsers(name), adminPasswordHash, loggers }, async (call) => {
      const attacker = await call('POST', '/auth/login/unamepwd', { username: name, password: 'attacker password' });
      expect(attacker.status).toBe(200);
      expect((await call('GET', '/api/admin', undefined, attacker.json.accessToken)).status).toBe(403);
      expect((await call('POST', '/auth/login/unamepwd', { username: name, password: OPERATOR_PASSWORD })).status).toBe(401);
    });
    expect(warnings.some((w) => w.includes(name) && /not granted/.test(w))).toBe(true);
  });
});
