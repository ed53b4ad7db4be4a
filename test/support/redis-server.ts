/**
 * Starts a throw-away `redis-server` for tests: a free 127.0.0.1 port, no persistence,
 * stop/restart for outage tests, and a hard kill if the test process exits first.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { createConnection } from 'node:net';
import { delimiter, join } from 'node:path';
import { freePort } from './free-port.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** URL of the redis-server started by the global setup; null when the binary is missing (outside CI). */
    redisUrl: string | null;
  }
}

/** A running (or stopped) redis-server owned by the caller. */
export interface RedisServer {
  readonly port: number;
  readonly url: string;
  /** Stops the server (SIGTERM, SIGKILL after 2 s); the port stays reserved for {@link restart}. */
  stop(): Promise<void>;
  /** Kills the server with SIGKILL, as a crash would; the port stays reserved for {@link restart}. */
  kill(): Promise<void>;
  /** Starts the server again on the same port and waits until it answers. */
  restart(): Promise<void>;
  /** Freezes the process (SIGSTOP): connections stay open and nothing is answered, as with a Redis stuck on a slow command. */
  freeze(): void;
  /** Lets a frozen server go on (SIGCONT). */
  thaw(): void;
}

/** Every redis process a test started; killed if the test process exits first. */
export const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

/**
 * The redis-server binary: `REDIS_SERVER_BIN` when set (only that one, so setting it to a
 * missing path simulates a machine without Redis), else the first on PATH or in /usr/bin.
 */
export function findRedisServerBinary(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const candidates = env.REDIS_SERVER_BIN
    ? [env.REDIS_SERVER_BIN]
    : [...(env.PATH ?? '').split(delimiter).map((dir) => dir && join(dir, 'redis-server')), '/usr/bin/redis-server'];
  for (const candidate of candidates) {
    if (!candidate) continue;
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here; try the next one
    }
  }
  return undefined;
}

function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(500, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (data) => done(/^(\+PONG|-NOAUTH)/.test(data.toString())));
  });
}

/** Resolves once the redis-server on `port` answers PING; fails when `child` exits first. */
export async function waitUntilAnswering(port: number, child: ChildProcess, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`redis-server on port ${port} exited during start-up`);
    if (await ping(port)) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`redis-server on port ${port} did not answer within ${timeoutMs} ms`);
}

/** Options of {@link startRedisServer}. */
export interface RedisServerOptions {
  /**
   * Keep data across {@link RedisServer.restart} and {@link RedisServer.kill}: an append-only
   * file in this directory, fsynced on every write (as a production Redis would be configured).
   * Default: no persistence, so a restart starts empty.
   */
  readonly persistDir?: string;
  /** More `redis-server` arguments, e.g. `['--maxmemory-policy', 'allkeys-lru']`. */
  readonly extraArgs?: readonly string[];
}

function launch(binary: string, port: number, options: RedisServerOptions): ChildProcess {
  const persistence = options.persistDir
    ? ['--appendonly', 'yes', '--appendfsync', 'always', '--dir', options.persistDir]
    : ['--appendonly', 'no', '--dir', '/tmp'];
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--daemonize', 'no', '--loglevel', 'warning', ...persistence, ...(options.extraArgs ?? [])];
  const child = spawn(binary, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  live.add(child);
  child.once('exit', () => live.delete(child));
  child.stderr?.resume();
  return child;
}

/** Stops a process (SIGKILL after 2 s) and waits for it to exit. */
export async function terminate(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill(signal);
  const timer = setTimeout(() => child.kill('SIGKILL'), 2000);
  await exited;
  clearTimeout(timer);
}

/**
 * Starts `redis-server` on a free port with persistence off and waits until it answers PING.
 *
 * @example
 * ```ts
 * const redis = await startRedisServer();
 * await redis.stop(); await redis.restart(); await redis.stop();
 * ```
 */
export async function startRedisServer(binary = findRedisServerBinary(), options: RedisServerOptions = {}): Promise<RedisServer> {
  if (!binary) throw new Error('redis-server binary not found (set REDIS_SERVER_BIN or install redis-server)');
  let lastError: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    let child = launch(binary, port, options);
    try {
      await waitUntilAnswering(port, child);
    } catch (error) {
      lastError = error;
      await terminate(child);
      continue;
    }
    return {
      port,
      url: `redis://127.0.0.1:${port}`,
      stop: () => terminate(child),
      kill: () => terminate(child, 'SIGKILL'),
      restart: async () => {
        await terminate(child);
        child = launch(binary, port, options);
        await waitUntilAnswering(port, child);
      },
      freeze: () => void child.kill('SIGSTOP'),
      thaw: () => void child.kill('SIGCONT'),
    };
  }
  throw lastError;
}
