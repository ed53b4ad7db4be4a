/**
 * A Redis that may evict keys can drop a logged-out player's revocation markers under memory
 * pressure, and the player's JWT works again. Start-up checks `maxmemory-policy` on a real
 * redis-server configured with `allkeys-lru`: a loud error outside production, a refusal in it.
 */
import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import type { Logger, LoggerFactory } from '@portcullis/core';
import { createRedisTestStack } from '@portcullis/core/testing';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { findRedisServerBinary, startRedisServer, type RedisServer } from '../../../test/support/redis-server.js';

const redisUrl = inject('redisUrl');
const binary = findRedisServerBinary();

function recordingLoggers(): { loggers: LoggerFactory; lines: Array<{ level: string; message: string }> } {
  const lines: Array<{ level: string; message: string }> = [];
  const logger = (level: string) => (message: string) => void lines.push({ level, message });
  const one: Logger = { debug: logger('debug'), info: logger('info'), warn: logger('warn'), error: logger('error') } as Logger;
  return { loggers: { create: () => one }, lines };
}

describe.runIf(redisUrl !== null && binary !== undefined)('Redis maxmemory-policy at start-up', () => {
  let lru: RedisServer;
  beforeAll(async () => {
    lru = await startRedisServer(binary, { extraArgs: ['--maxmemory', '64mb', '--maxmemory-policy', 'allkeys-lru'] });
  });
  afterAll(() => lru.stop());

  it('outside production, starts on an evicting Redis but logs an error that names the policy and the fix', async () => {
    const { loggers, lines } = recordingLoggers();
    const stack = await createRedisTestStack(lru.url, { loggers });
    try {
      const loud = lines.filter((l) => l.level === 'error' && /maxmemory-policy/.test(l.message));
      expect(loud).toHaveLength(1);
      expect(loud[0]!.message).toMatch(/allkeys-lru/);
      expect(loud[0]!.message).toMatch(/noeviction/);
    } finally {
      await stack.close();
    }
  });

  it('in production, refuses to start on an evicting Redis', async () => {
    const start = createRedisTestStack(lru.url, { key: randomBytes(32).toString('base64'), env: { NODE_ENV: 'production' } });
    await expect(start).rejects.toMatchObject({ code: 'config_invalid', message: expect.stringMatching(/maxmemory-policy.*allkeys-lru/) });
  });

  it('says nothing about a Redis with noeviction, in production or not', async () => {
    const { loggers, lines } = recordingLoggers();
    const stack = await createRedisTestStack(redisUrl!, { loggers, key: randomBytes(32).toString('base64'), env: { NODE_ENV: 'production' } });
    await stack.close();
    expect(lines.filter((l) => /maxmemory-policy/.test(l.message))).toEqual([]);
  });
});
