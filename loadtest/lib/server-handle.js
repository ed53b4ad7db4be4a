/**
 * Starts game-server-process.js in a child process (with --expose-gc, so memory
 * samples can be taken after a collection; plus LOADTEST_SERVER_FLAGS), pinned to
 * one core when `cpu` is given, and calls its IPC commands.
 */
import { forkPinned } from '../../bench/lib/cpu-pinning.js';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
let serverCpu;

/** The core every game server started from now on is pinned to (undefined: unpinned); run.js sets it once. */
export function setServerCpu(cpu) {
  serverCpu = cpu;
}

/**
 * @param {{ provider?: 'inmemory'|'redis', redisUrl?: string, workFactor?: number, accessTokenMinutes?: number, cpu?: number }} options
 *   `cpu`: the core to pin the server to (taskset); null: unpinned; default: the one chosen by `setServerCpu`, else unpinned.
 * @returns {Promise<{ http: string, wsUrl: string, tcpPort: number, udpPort: number, call: (cmd: string, args?: object) => Promise<any>, close: () => Promise<void>, pid: number }>}
 */
export async function startGameServer(options = {}) {
  const env = {
    ...process.env,
    LOADTEST_PROVIDER: options.provider ?? 'inmemory',
    ...(options.redisUrl ? { LOADTEST_REDIS_URL: options.redisUrl } : {}),
    LOADTEST_WORK_FACTOR: String(options.workFactor ?? 11),
    LOADTEST_ACCESS_TOKEN_MINUTES: String(options.accessTokenMinutes ?? 15),
  };
  // LOADTEST_SERVER_FLAGS: extra Node flags for the server only (e.g. --trace-gc, --cpu-prof) when chasing a number.
  const execArgv = ['--expose-gc', ...(process.env.LOADTEST_SERVER_FLAGS ?? '').split(' ').filter(Boolean)];
  const child = forkPinned(join(here, 'game-server-process.js'), [], { execArgv, env, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }, options.cpu === null ? undefined : (options.cpu ?? serverCpu));
  let seq = 0;
  const pending = new Map();
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const ready = new Promise((resolve, reject) => {
    child.on('message', (m) => {
      if (m.ready) return resolve(m);
      const waiter = pending.get(m.seq);
      pending.delete(m.seq);
      if (m.ok) waiter?.resolve(m.value);
      else waiter?.reject(new Error(m.error));
    });
    exited.then(({ code, signal }) => reject(new Error(`game server exited (${signal ?? code}) before it was ready`)));
  });
  exited.then(({ code, signal }) => {
    for (const waiter of pending.values()) waiter.reject(new Error(`game server exited (${signal ?? code})`));
    pending.clear();
  });
  const info = await ready;
  const call = (cmd, args) =>
    new Promise((resolve, reject) => {
      if (child.exitCode !== null) return reject(new Error('game server is not running'));
      pending.set(++seq, { resolve, reject });
      child.send({ seq, cmd, args });
    });
  return {
    ...info,
    pid: child.pid,
    wsUrl: `${info.http.replace(/^http/, 'ws')}/ws`,
    call,
    exited,
    async close() {
      if (child.exitCode !== null) return;
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await call('close').catch(() => {});
      await exited;
      clearTimeout(timer);
    },
  };
}
