/**
 * The parent side of a bench's server process (child side: child-rpc.js): starts
 * it, pinned to a core when asked, waits for its ready message and calls its IPC
 * commands. `BENCH_SERVER_FLAGS` (or the variable named by `flagsVariable`) adds Node
 * flags to the server only, e.g. `BENCH_SERVER_FLAGS="--cpu-prof --cpu-prof-dir=/tmp/prof"`
 * to profile it. The load tests start their game server through it too.
 */
import { forkPinned } from './cpu-pinning.js';

/**
 * @example
 * const server = await startServerProcess(file, ['--serve'], { env, cpu: plan.serverCpu });
 * const micros = await server.call('cpu');
 * await server.stop();
 */
export async function startServerProcess(modulePath, args = [], { env = process.env, execArgv = [], cpu, flagsVariable = 'BENCH_SERVER_FLAGS', name = 'bench server' } = {}) {
  const flags = [...execArgv, ...(process.env[flagsVariable] ?? '').split(' ').filter(Boolean)];
  const child = forkPinned(modulePath, args, { env, execArgv: flags, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }, cpu);
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
    exited.then(({ code, signal }) => reject(new Error(`${name} exited (${signal ?? code}) before it was ready`)));
  });
  exited.then(({ code, signal }) => {
    for (const waiter of pending.values()) waiter.reject(new Error(`${name} exited (${signal ?? code})`));
    pending.clear();
  });
  const info = await ready;
  const call = (cmd, args) =>
    new Promise((resolve, reject) => {
      if (child.exitCode !== null || child.signalCode !== null) return reject(new Error(`${name} is not running`));
      pending.set(++seq, { resolve, reject });
      child.send({ seq, cmd, args });
    });
  return {
    info,
    pid: child.pid,
    child,
    call,
    exited,
    /** Asks the server to close (command `close`), killing it after 10 s. */
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await call('close').catch(() => {});
      await exited;
      clearTimeout(timer);
    },
  };
}
