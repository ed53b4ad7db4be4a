/**
 * The Redis topologies the global setup started, as tests select them: a single server, a
 * 3-primary cluster and a sentinel set (all three, or none when redis-server is missing outside
 * CI). Each comes with the `SVC__…` settings that point a test stack at it.
 */
import { inject } from 'vitest';

/** One Redis topology the run provides: its name and the settings that select it. */
export interface RedisUnderTest {
  readonly name: 'single' | 'cluster' | 'sentinel';
  readonly env: Readonly<Record<string, string>>;
}

/**
 * @example
 * ```ts
 * describe.each(redisTopologies())('$name', ({ env }) => {
 *   beforeEach(async () => (stack = await createRedisTestStack(inject('redisUrl')!, { env })));
 * });
 * ```
 */
export function redisTopologies(): RedisUnderTest[] {
  const cluster = inject('redisClusterNodes');
  const sentinels = inject('redisSentinelNodes');
  const topologies: RedisUnderTest[] = [];
  if (inject('redisUrl')) topologies.push({ name: 'single', env: {} });
  if (cluster) topologies.push({ name: 'cluster', env: { SVC__PERSISTENCE__CACHE__TOPOLOGY: 'cluster', SVC__PERSISTENCE__CACHE__NODES: cluster } });
  if (sentinels) topologies.push({ name: 'sentinel', env: { SVC__PERSISTENCE__CACHE__TOPOLOGY: 'sentinel', SVC__PERSISTENCE__CACHE__NODES: sentinels } });
  return topologies;
}

/**
 * Every topology by name, `env` undefined when this run has none (no redis-server outside CI),
 * for suites that list each one and skip, by name, the ones missing: a file of such suites
 * then always has its tests, skipped or run.
 *
 * @example
 * ```ts
 * for (const { name, env } of everyRedisTopology()) describe.skipIf(!env)(`fleet (${name})`, () => { … });
 * ```
 */
export function everyRedisTopology(): Array<{ readonly name: RedisUnderTest['name']; readonly env: RedisUnderTest['env'] | undefined }> {
  const available = redisTopologies();
  return (['single', 'cluster', 'sentinel'] as const).map((name) => ({ name, env: available.find((t) => t.name === name)?.env }));
}

/** `host:port,host:port` (as the setup provides a cluster's or a sentinel set's nodes) as host and port pairs. */
export function hostPorts(nodes: string): Array<{ host: string; port: number }> {
  return nodes.split(',').map((node) => {
    const [host, port] = node.split(':');
    return { host: host!, port: Number(port) };
  });
}
