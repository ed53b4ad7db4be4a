/**
 * A throw-away redis-server for benchmarks: a free 127.0.0.1 port, persistence off,
 * stopped by the caller (and killed if the bench process exits first). A small copy of
 * test/support/redis-server.ts, which plain-JS benches cannot import.
 */
import { spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { delimiter, join } from 'node:path';

/** The redis-server binary (REDIS_SERVER_BIN, PATH, /usr/bin), or undefined. */
export function findRedisServer(env = process.env) {
  const candidates = env.REDIS_SERVER_BIN ? [env.REDIS_SERVER_BIN] : [...(env.PATH ?? '').split(delimiter).map((d) => d && join(d, 'redis-server')), '/usr/bin/redis-server'];
  return candidates.find((c) => {
    try {
      return c && (accessSync(c, constants.X_OK), true);
    } catch {
      return false;
    }
  });
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer().once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

function ping(port) {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    const done = (ok) => (socket.destroy(), resolve(ok));
    socket.setTimeout(500, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (d) => done(d.toString().startsWith('+PONG')));
  });
}

/** Starts redis-server and resolves `{ url, pid, stop() }` once it answers PING. */
export async function startRedis(binary = findRedisServer()) {
  if (!binary) throw new Error('redis-server not found');
  const port = await freePort();
  const child = spawn(binary, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--loglevel', 'warning', '--dir', '/tmp'], {
    stdio: 'ignore',
  });
  const kill = () => child.kill('SIGKILL');
  process.once('exit', kill);
  const deadline = Date.now() + 5000;
  while (!(await ping(port))) {
    if (Date.now() > deadline || child.exitCode !== null) {
      kill();
      throw new Error('redis-server did not start');
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  return {
    url: `redis://127.0.0.1:${port}`,
    pid: child.pid,
    async stop() {
      process.off('exit', kill);
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    },
  };
}
