/**
 * Vitest global setup: starts one redis-server, one 3-primary Redis Cluster, one Sentinel set
 * and one PostgreSQL for the whole run and hands their addresses to tests as
 * `inject('redisUrl')`, `inject('redisClusterNodes')`, `inject('redisSentinelNodes')` and
 * `inject('postgresUrl')`. Without a binary
 * the run fails under CI and, outside CI, the suites that need it report themselves as
 * skipped after a loud warning.
 */
import type { TestProject } from 'vitest/node';
import { findPostgresBinDir, startPostgresServer } from './postgres-server.js';
import { findRedisServerBinary, startRedisServer } from './redis-server.js';
import { startRedisCluster, startSentinelSet } from './redis-topology.js';

function warnSkipped(lines: string[]): void {
  const bar = '!'.repeat(78);
  console.warn(['', bar, ...lines.map((line) => `!! ${line.padEnd(72)} !!`), bar, ''].join('\n'));
}

export default async function setup(project: Pick<TestProject, 'provide'>): Promise<() => Promise<void>> {
  const ci = /^(?!(?:0|false|no)?$)/i.test(process.env.CI?.trim() ?? '');
  const stops: Array<() => Promise<void>> = [];
  const stopAll = async () => {
    await Promise.all(stops.map((stop) => stop()));
  };
  try {
    const redisBinary = findRedisServerBinary();
    if (redisBinary) {
      const [redis, cluster, sentinel] = await Promise.all([startRedisServer(redisBinary), startRedisCluster(redisBinary), startSentinelSet(redisBinary)]);
      stops.push(() => redis.stop(), () => cluster.stop(), () => sentinel.stop());
      project.provide('redisUrl', redis.url);
      project.provide('redisClusterNodes', cluster.nodes);
      project.provide('redisSentinelNodes', sentinel.nodes);
    } else {
      if (ci) throw new Error('redis-server is required in CI: install it or set REDIS_SERVER_BIN');
      warnSkipped(['redis-server not found: every Redis-backed test is SKIPPED in this run.', 'Install redis-server or set REDIS_SERVER_BIN; under CI this run fails.']);
      project.provide('redisUrl', null);
      project.provide('redisClusterNodes', null);
      project.provide('redisSentinelNodes', null);
    }
    const postgresBinDir = findPostgresBinDir();
    if (postgresBinDir) {
      const postgres = await startPostgresServer(postgresBinDir);
      stops.push(() => postgres.destroy());
      project.provide('postgresUrl', postgres.url);
    } else {
      if (ci) throw new Error("PostgreSQL is required in CI: install Debian's postgresql or set POSTGRES_BIN_DIR");
      warnSkipped(['PostgreSQL not found: every PostgreSQL-backed test is SKIPPED in this run.', 'Install postgresql or set POSTGRES_BIN_DIR; under CI this run fails.']);
      project.provide('postgresUrl', null);
    }
  } catch (error) {
    await stopAll();
    throw error;
  }
  return stopAll;
}
