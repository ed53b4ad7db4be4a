/**
 * Starts game-server-process.js in a child process (with --expose-gc, so memory
 * samples can be taken after a collection; the Node flags set by run.js, which are
 * the ones docs/performance.md recommends for production; plus LOADTEST_SERVER_FLAGS),
 * pinned to one core when `cpu` is given, and calls its IPC commands.
 */
import { EVERY_CORE } from '../../bench/lib/cpu-pinning.js';
import { startServerProcess } from '../../bench/lib/server-process.js';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
let serverCpu;
let serverFlags = [];

/** The core every game server started from now on is pinned to (undefined: unpinned); run.js sets it once. */
export function setServerCpu(cpu) {
  serverCpu = cpu;
}

/** Node flags every server (game and control alike) is started with from now on; run.js sets them once. */
export function setServerFlags(flags) {
  serverFlags = [...flags];
}

/**
 * @param {{ provider?: 'inmemory'|'redis', redisUrl?: string, workFactor?: number, accessTokenMinutes?: number, cpu?: number, shed?: boolean }} options
 *   `cpu`: the core to pin the server to (taskset); null: every core the load test started with (not the
 *   generator's one core, which a child would otherwise inherit); default: the one chosen by `setServerCpu`, else unpinned.
 *   `shed: false`: gate calls are never refused `overloaded` (the soak, whose heap snapshots stop the loop).
 * @returns {Promise<{ http: string, wsUrl: string, tcpPort: number, udpPort: number, call: (cmd: string, args?: object) => Promise<any>, close: () => Promise<void>, pid: number }>}
 */
export async function startGameServer(options = {}) {
  const env = {
    ...process.env,
    LOADTEST_PROVIDER: options.provider ?? 'inmemory',
    ...(options.redisUrl ? { LOADTEST_REDIS_URL: options.redisUrl } : {}),
    LOADTEST_WORK_FACTOR: String(options.workFactor ?? 11),
    LOADTEST_ACCESS_TOKEN_MINUTES: String(options.accessTokenMinutes ?? 15),
    ...(options.shed === false ? { LOADTEST_SHED: 'off' } : {}),
  };
  // LOADTEST_SERVER_FLAGS: extra Node flags for the server only (e.g. --trace-gc, --cpu-prof) when chasing a number.
  const cpu = options.cpu === null ? EVERY_CORE : (options.cpu ?? serverCpu);
  const server = await startServerProcess(join(here, 'game-server-process.js'), [], { env, execArgv: ['--expose-gc', ...serverFlags], cpu, flagsVariable: 'LOADTEST_SERVER_FLAGS', name: 'game server' });
  const { info, call, exited } = server;
  return {
    ...info,
    pid: server.pid,
    wsUrl: `${info.http.replace(/^http/, 'ws')}/ws`,
    call,
    exited,
    close: () => server.stop(),
  };
}

/**
 * Starts the control server (control-server-process.js: bare `ws`, no authentication),
 * pinned like the game server and with the same Node flags, with the same IPC commands
 * for stats and the event loop.
 */
export async function startControlServer(options = {}) {
  const cpu = options.cpu === null ? EVERY_CORE : (options.cpu ?? serverCpu);
  const server = await startServerProcess(join(here, 'control-server-process.js'), [], { execArgv: ['--expose-gc', ...serverFlags], cpu, flagsVariable: 'LOADTEST_SERVER_FLAGS', name: 'control server' });
  return { ...server.info, pid: server.pid, call: server.call, exited: server.exited, close: () => server.stop() };
}
