/**
 * Throw-away Redis Cluster and Sentinel sets for tests, from the same `redis-server` binary
 * as the single node: a 3-primary cluster (created with `redis-cli --cluster create`), and a
 * primary, a replica and three sentinels (`redis-server <conf> --sentinel`, so the separate
 * redis-sentinel package is not needed). Everything runs on free 127.0.0.1 ports in a
 * temporary directory that is removed on stop.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './free-port.js';
import { live, terminate, waitUntilAnswering } from './redis-server.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** `host:port,…` seed nodes of the 3-primary cluster of the global setup; null without redis-server. */
    redisClusterNodes: string | null;
    /** `host:port,…` of the three sentinels of the global setup (primary named `mymaster`); null without redis-server. */
    redisSentinelNodes: string | null;
  }
}

const run = promisify(execFile);

/** A set of redis processes owned by the caller. */
export interface RedisTopologyServers {
  /** `host:port,…`: the cluster's seed nodes, or the sentinels. */
  readonly nodes: string;
  /** Stops every process and removes the working directory. */
  stop(): Promise<void>;
}

/** A sentinel set, with handles on its data servers for failover tests. */
export interface SentinelSet extends RedisTopologyServers {
  readonly master: string;
  /** Port of the server that is primary at start. */
  readonly primaryPort: number;
  readonly replicaPort: number;
  /** Kills the primary with SIGKILL, as a crash would. */
  killPrimary(): Promise<void>;
}

/** redis-cli next to redis-server (or on PATH as /usr/bin/redis-cli). */
export function findRedisCli(serverBinary: string): string | undefined {
  for (const candidate of [join(dirname(serverBinary), 'redis-cli'), '/usr/bin/redis-cli']) {
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // next
    }
  }
  return undefined;
}

function spawnRedis(binary: string, args: string[]): ChildProcess {
  const child = spawn(binary, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  live.add(child);
  child.once('exit', () => live.delete(child));
  child.stderr?.resume();
  return child;
}

const BASE = ['--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no', '--loglevel', 'warning'];

async function cli(redisCli: string, port: number, ...args: string[]): Promise<string> {
  const { stdout } = await run(redisCli, ['-h', '127.0.0.1', '-p', String(port), '--no-auth-warning', ...args], { timeout: 10_000 });
  return stdout;
}

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${what} not reached within ${timeoutMs} ms`);
}

/**
 * Starts three `--cluster-enabled` servers, joins them into one cluster with no replicas and
 * waits until every node reports `cluster_state:ok`.
 *
 * @example
 * ```ts
 * const cluster = await startRedisCluster('/usr/bin/redis-server');
 * await cluster.stop();
 * ```
 */
export async function startRedisCluster(binary: string): Promise<RedisTopologyServers> {
  const redisCli = findRedisCli(binary);
  if (!redisCli) throw new Error('redis-cli not found next to redis-server; it creates the test cluster');
  const dir = mkdtempSync(join(tmpdir(), 'portcullis-cluster-'));
  const children: ChildProcess[] = [];
  const stop = async () => {
    await Promise.all(children.map((child) => terminate(child)));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const ports = await Promise.all([freePort(), freePort(), freePort()]);
    for (const port of ports) {
      const args = ['--port', String(port), ...BASE, '--dir', dir, '--cluster-enabled', 'yes', '--cluster-config-file', `nodes-${port}.conf`, '--cluster-node-timeout', '2000'];
      children.push(spawnRedis(binary, args));
    }
    await Promise.all(ports.map((port, i) => waitUntilAnswering(port, children[i]!)));
    await run(redisCli, ['--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', '0', '--cluster-yes'], { timeout: 20_000 });
    for (const port of ports) await until(`cluster_state:ok on ${port}`, async () => (await cli(redisCli, port, 'cluster', 'info')).includes('cluster_state:ok'));
    return { nodes: ports.map((p) => `127.0.0.1:${p}`).join(','), stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * Starts a primary, a replica of it and three sentinels watching it as `master` (quorum 2,
 * down after 1 s, failover timeout 5 s), and waits until the replica is in sync and every
 * sentinel knows the replica and the other sentinels.
 *
 * @example
 * ```ts
 * const set = await startSentinelSet('/usr/bin/redis-server');
 * await set.killPrimary(); // a sentinel promotes the replica within a few seconds
 * await set.stop();
 * ```
 */
export async function startSentinelSet(binary: string, options: { readonly master?: string; readonly password?: string } = {}): Promise<SentinelSet> {
  const master = options.master ?? 'mymaster';
  const auth = options.password ? ['--requirepass', options.password, '--masterauth', options.password] : [];
  const cliAuth = options.password ? ['-a', options.password] : [];
  const redisCli = findRedisCli(binary);
  if (!redisCli) throw new Error('redis-cli not found next to redis-server');
  const dir = mkdtempSync(join(tmpdir(), 'portcullis-sentinel-'));
  const children: ChildProcess[] = [];
  const stop = async () => {
    await Promise.all(children.map((child) => terminate(child)));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const [primaryPort, replicaPort, ...sentinelPorts] = await Promise.all([freePort(), freePort(), freePort(), freePort(), freePort()]) as [number, number, number, number, number];
    const primary = spawnRedis(binary, ['--port', String(primaryPort), ...BASE, '--dir', dir, ...auth]);
    children.push(primary);
    const replica = spawnRedis(binary, ['--port', String(replicaPort), ...BASE, '--dir', dir, ...auth, '--replicaof', '127.0.0.1', String(primaryPort)]);
    children.push(replica);
    await Promise.all([waitUntilAnswering(primaryPort, primary), waitUntilAnswering(replicaPort, replica)]);
    await until('replica in sync', async () => (await cli(redisCli, replicaPort, ...cliAuth, 'info', 'replication')).includes('master_link_status:up'));
    const sentinels = sentinelPorts.map((port) => {
      const conf = join(dir, `sentinel-${port}.conf`);
      writeFileSync(
        conf,
        [
          `port ${port}`,
          'bind 127.0.0.1',
          `dir ${dir}`,
          `sentinel monitor ${master} 127.0.0.1 ${primaryPort} 2`,
          `sentinel down-after-milliseconds ${master} 1000`,
          `sentinel failover-timeout ${master} 5000`,
          `sentinel parallel-syncs ${master} 1`,
          ...(options.password ? [`sentinel auth-pass ${master} ${options.password}`, `requirepass ${options.password}`, `sentinel sentinel-pass ${options.password}`] : []),
          '',
        ].join('\n'),
      );
      const child = spawnRedis(binary, [conf, '--sentinel', '--loglevel', 'warning']);
      children.push(child);
      return { port, child };
    });
    await Promise.all(sentinels.map(({ port, child }) => waitUntilAnswering(port, child)));
    for (const { port } of sentinels) {
      await until(`sentinel ${port} sees the set`, async () => {
        const text = await cli(redisCli, port, ...cliAuth, 'sentinel', 'master', master);
        const fields = text.split('\n').map((l) => l.trim());
        const value = (name: string) => fields[fields.indexOf(name) + 1];
        return value('num-slaves') === '1' && value('num-other-sentinels') === '2';
      });
    }
    return {
      nodes: sentinelPorts.map((p) => `127.0.0.1:${p}`).join(','),
      master,
      primaryPort,
      replicaPort,
      killPrimary: () => terminate(primary, 'SIGKILL'),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
