/**
 * Pins a bench's or load test's server process and its load generator to
 * separate cores with `taskset` (util-linux), so neither can take the other's
 * CPU, and measures how busy the server's core was with anything else.
 * Without taskset, on one usable core, or with pinning turned off, everything
 * runs unpinned and `plan.warning` says why.
 */
import { execFileSync, fork, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';

const TICKS_PER_SECOND = 100;

/** The CPUs this process may run on, from /proc (Linux), or undefined elsewhere. */
export function allowedCpus() {
  try {
    const list = /^Cpus_allowed_list:\s*(.+)$/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1];
    if (!list) return undefined;
    const cpus = [];
    for (const part of list.trim().split(',')) {
      const [from, to = from] = part.split('-').map(Number);
      for (let cpu = from; cpu <= to; cpu++) cpus.push(cpu);
    }
    return cpus;
  } catch {
    return undefined;
  }
}

/** The CPUs this process could use when it started, before {@link pinProcess} narrowed them. */
const STARTING_CPUS = allowedCpus();

/**
 * The `cpu` of {@link forkPinned} for a child that may run on every core this process
 * could use when it started. A child inherits its parent's affinity, so once the
 * generator has pinned itself, a child started without a core would share the
 * generator's one core.
 */
export const EVERY_CORE = 'every';

function hasTaskset() {
  try {
    execFileSync('taskset', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * Decides where the server and the generator run: `serverCpu` (default 1) and
 * `generatorCpu` (default 0) when taskset exists and both are usable and distinct.
 *
 * @example
 * const plan = planPinning({ pin: true, serverCpu: 1, generatorCpu: 0 });
 * if (plan.warning) console.warn(plan.warning);
 */
export function planPinning({ pin = true, serverCpu = 1, generatorCpu = 0 } = {}) {
  const off = (warning) => ({ enabled: false, serverCpu: undefined, generatorCpu: undefined, warning, line: `not pinned (${warning})` });
  if (!pin) return off('pinning turned off');
  if (serverCpu === generatorCpu) return off(`server and generator were both given core ${serverCpu}`);
  if (!hasTaskset()) return off('taskset not found: install util-linux to pin server and generator to separate cores');
  const cpus = allowedCpus();
  if (cpus && cpus.length < 2) return off(`only ${cpus.length} usable core: server and generator share it`);
  if (cpus && !(cpus.includes(serverCpu) && cpus.includes(generatorCpu))) {
    return off(`cores ${serverCpu} and ${generatorCpu} are not both usable (allowed: ${cpus.join(',')})`);
  }
  return { enabled: true, serverCpu, generatorCpu, warning: undefined, line: `server on core ${serverCpu}, load generator on core ${generatorCpu} (taskset)` };
}

/**
 * Pins every thread of `pid` (default: this process) to `cpu`; threads started later
 * inherit it, and so do child processes started afterwards (a redis-server, for one).
 */
export function pinProcess(cpu, pid = process.pid) {
  if (cpu === undefined) return;
  execFileSync('taskset', ['-a', '-p', '-c', String(cpu), String(pid)], { stdio: 'ignore' });
}

/**
 * `fork`, started under `taskset -c <cpu>` when `cpu` is given, so the child runs
 * on that core from its first instruction ({@link EVERY_CORE}: on every core this
 * process started with). The IPC channel works as with `fork`.
 *
 * @example
 * const child = forkPinned(serverFile, ['--serve'], { env }, plan.serverCpu);
 */
export function forkPinned(modulePath, args = [], options = {}, cpu = undefined) {
  const cores = cpu === EVERY_CORE ? (STARTING_CPUS && hasTaskset() ? STARTING_CPUS.join(',') : undefined) : cpu;
  if (cores === undefined) return fork(modulePath, args, options);
  const { execArgv = process.execArgv, stdio = ['ignore', 'inherit', 'inherit', 'ipc'], ...rest } = options;
  return spawn('taskset', ['-c', String(cores), process.execPath, ...execArgv, modulePath, ...args], { ...rest, stdio });
}

function coreTicks(cpu) {
  const line = readFileSync('/proc/stat', 'utf8').split('\n').find((l) => l.startsWith(`cpu${cpu} `));
  const [user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number);
  return user + nice + system + irq + softirq + steal;
}

function processTicks(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

/**
 * Starts watching core `cpu`; `stop()` answers the share of that core (0–1) that
 * went to anything but process `pid` over the interval (other processes, interrupts),
 * or undefined when not measurable. At 10 ms ticks, a window under a second is coarse.
 *
 * @example
 * const watch = watchCore(plan.serverCpu, child.pid);
 * await load();
 * const others = watch.stop(); // 0.03: 3 % of the server's core went elsewhere
 */
export function watchCore(cpu, pid) {
  if (cpu === undefined) return { stop: () => undefined };
  let start;
  try {
    start = { at: performance.now(), core: coreTicks(cpu), own: processTicks(pid) };
  } catch {
    return { stop: () => undefined };
  }
  return {
    stop() {
      try {
        const ticks = (TICKS_PER_SECOND * (performance.now() - start.at)) / 1000;
        const others = coreTicks(cpu) - start.core - (processTicks(pid) - start.own);
        return Math.min(1, Math.max(0, others / ticks));
      } catch {
        return undefined;
      }
    },
  };
}
