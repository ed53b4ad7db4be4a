/**
 * Publishing on a fleet's revocation channel as another server of it would, for tests that
 * play a server (or an attacker with access to Redis) on every topology.
 */
import { createClient, createCluster, createSentinel } from '@keyv/redis';
import { inject } from 'vitest';
import { hostPorts, type RedisUnderTest } from '../../support/redis-topologies.js';

/**
 * A client of the topology's own, publishing as a server of the fleet does: on a cluster with
 * sharded pub/sub (`SPUBLISH`), elsewhere with `PUBLISH` on the primary.
 */
export async function rawPublisher({ name, env }: RedisUnderTest): Promise<{ publish(channel: string, message: string): Promise<unknown>; close(): Promise<unknown> }> {
  const nodes = hostPorts(env.SVC__PERSISTENCE__CACHE__NODES ?? '');
  if (name === 'cluster') {
    const cluster = createCluster({ rootNodes: nodes.map((socket) => ({ socket })) });
    cluster.on('error', () => {});
    await cluster.connect();
    return { publish: (channel, message) => cluster.sPublish(channel, message), close: () => cluster.close() };
  }
  const client = name === 'sentinel' ? createSentinel({ name: 'mymaster', sentinelRootNodes: nodes }) : createClient({ url: inject('redisUrl')! });
  client.on('error', () => {});
  await client.connect();
  return { publish: (channel, message) => client.publish(channel, message), close: () => client.close() };
}
