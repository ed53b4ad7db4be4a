/**
 * Vitest global setup: starts one redis-server for the whole run and hands its URL to
 * tests as `inject('redisUrl')`. Without the binary the run fails under CI and, outside
 * CI, Redis-backed suites report themselves as skipped after a loud warning.
 */
import type { TestProject } from 'vitest/node';
import { findRedisServerBinary, startRedisServer } from './redis-server.js';

export default async function setup(project: TestProject): Promise<void | (() => Promise<void>)> {
  const binary = findRedisServerBinary();
  if (!binary) {
    const ci = /^(?!(?:0|false|no)?$)/i.test(process.env.CI?.trim() ?? '');
    if (ci) throw new Error('redis-server is required in CI: install it or set REDIS_SERVER_BIN');
    const bar = '!'.repeat(78);
    const lines = [
      'redis-server not found: every Redis-backed test is SKIPPED in this run.',
      'Install redis-server or set REDIS_SERVER_BIN; under CI this run fails.',
    ];
    console.warn(['', bar, ...lines.map((line) => `!! ${line.padEnd(72)} !!`), bar, ''].join('\n'));
    project.provide('redisUrl', null);
    return undefined;
  }
  const redis = await startRedisServer(binary);
  project.provide('redisUrl', redis.url);
  return () => redis.stop();
}
