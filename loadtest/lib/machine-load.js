/**
 * How busy the machine was besides the load test: the CPU time of every process
 * minus that of the load test's own processes, from /proc (Linux; elsewhere the
 * numbers are left out). On a shared machine this says how much of a latency
 * spike may be someone else's.
 */
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';

const TICKS_PER_SECOND = 100;
const TOTAL_CORES = availableParallelism();

/**
 * Busy ticks of one `/proc/stat` line (`cpu` or `cpuN`): all but idle and iowait.
 * @param {string} line
 */
function busyOf(line) {
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = line.trim().split(/\s+/).slice(1).map(Number);
  return { busy: user + nice + system + irq + softirq + steal, softirq: softirq + irq };
}

/** The machine's busy and interrupt ticks, and the busy ticks of each core by its number (`cpuN`). */
function cpuTicks() {
  const lines = readFileSync('/proc/stat', 'utf8').split('\n');
  const cores = new Map(lines.filter((line) => /^cpu\d/.test(line)).map((line) => [Number(line.slice(3, line.indexOf(' '))), busyOf(line).busy]));
  return { ...busyOf(lines[0] ?? ''), cores };
}

/**
 * The kernel's network counters that turn into latency without any process being busy:
 * packets dropped because a core's input backlog was full (`/proc/net/softnet_stat`, second
 * column, summed over cores; on loopback every packet passes that backlog, and a drop is
 * resent by TCP a tail-loss probe later, about 200 ms when it was the only packet in flight)
 * and TCP segments retransmitted (`/proc/net/snmp`). Undefined where they cannot be read.
 */
export function networkCounters() {
  return parseNetworkCounters(readOrUndefined('/proc/net/softnet_stat'), readOrUndefined('/proc/net/snmp'));
}

/**
 * {@link networkCounters} from the two files' text.
 * @param {string | undefined} softnet
 * @param {string | undefined} snmp
 * @returns {{ backlogDrops: number, retransmits: number } | undefined}
 */
export function parseNetworkCounters(softnet, snmp) {
  if (softnet === undefined || snmp === undefined) return undefined;
  const backlogDrops = softnet.trim().split('\n').reduce((sum, line) => sum + Number.parseInt(line.trim().split(/\s+/)[1] ?? '0', 16), 0);
  const tcp = snmp.split('\n').filter((line) => line.startsWith('Tcp:'));
  const [header, row] = tcp;
  if (header === undefined || row === undefined) return undefined;
  const names = header.trim().split(/\s+/);
  const values = row.trim().split(/\s+/);
  const retransmits = Number(values[names.indexOf('RetransSegs')]);
  if (!Number.isFinite(backlogDrops) || !Number.isFinite(retransmits)) return undefined;
  return { backlogDrops, retransmits };
}

/** @param {string} file */
function readOrUndefined(file) {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

/**
 * User + system ticks of process `pid` (all its threads); 0 when it is gone.
 * @param {number} pid
 */
export function processTicks(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return 0;
  }
}

/**
 * Starts measuring the processes named in `roles` (role → pid; undefined pids are
 * left out); `stop()` answers, in cores over the interval: `roles` (each process's
 * CPU, all its threads), `oursCores` (their sum), `interruptCores` (irq and softirq:
 * mostly loopback networking of this very test), `otherCores` (everything else: other
 * processes) and `coreBusy` (core number → how busy it was, whoever ran on it: a core near 1 had no
 * time to spare, for the process pinned there or for the interrupts it handled), or undefined
 * off Linux.
 *
 * @example
 * const machine = watchMachineLoad({ server: server.pid, generator: process.pid });
 * const load = machine.stop(); // { roles: { server: 0.71, generator: 0.38 }, oursCores: 1.09, ... }
 * @param {Record<string, number | undefined>} roles
 */
export function watchMachineLoad(roles) {
  const named = /** @type {Array<[string, number]>} */ (Object.entries(roles).filter(([, pid]) => pid !== undefined));
  let start;
  try {
    start = { at: Date.now(), cpu: cpuTicks(), roles: named.map(([, pid]) => processTicks(pid)), network: networkCounters() };
  } catch {
    return { stop: () => undefined };
  }
  return {
    stop() {
      const perSecond = TICKS_PER_SECOND * ((Date.now() - start.at) / 1000);
      const cpu = cpuTicks();
      const busy = (cpu.busy - start.cpu.busy) / perSecond;
      const interrupts = (cpu.softirq - start.cpu.softirq) / perSecond;
      const perRole = Object.fromEntries(named.map(([role, pid], i) => [role, (processTicks(pid) - (start.roles[i] ?? 0)) / perSecond]));
      const mine = Object.values(perRole).reduce((a, b) => a + b, 0);
      const coreBusy = Object.fromEntries([...cpu.cores].map(([core, ticks]) => [core, (ticks - (start.cpu.cores.get(core) ?? ticks)) / perSecond]));
      const network = networkCounters();
      const kernel = start.network && network
        ? { backlogDrops: network.backlogDrops - start.network.backlogDrops, retransmits: network.retransmits - start.network.retransmits }
        : undefined;
      return { roles: perRole, oursCores: mine, interruptCores: interrupts, otherCores: Math.max(0, busy - mine - interrupts), coreBusy, kernel };
    },
  };
}

/**
 * "server 0.71 cores, generator 0.38, redis 0.05, irq/softirq 0.42, other processes 0.05 (of 2); busy by core: 0 0.61, 1 0.95; kernel: 0 packets dropped from a full input backlog, 71 TCP segments retransmitted"
 * @param {any} load a result of `watchMachineLoad(…).stop()`, or undefined
 */
export function formatMachineLoad(load) {
  if (!load) return 'machine load not measured (no /proc)';
  const roles = Object.entries(load.roles ?? {}).map(([role, cores], i) => `${role} ${cores.toFixed(2)}${i === 0 ? ' cores' : ''}`);
  const ours = roles.length > 0 ? roles.join(', ') : `this test ${load.oursCores.toFixed(2)} cores`;
  // Reports saved before the per-core figures have none.
  const byCore = load.coreBusy ? `; busy by core: ${Object.entries(load.coreBusy).map(([core, busy]) => `${core} ${busy.toFixed(2)}`).join(', ')}` : '';
  // And before the kernel's network counters.
  const kernel = load.kernel ? `; kernel: ${load.kernel.backlogDrops.toLocaleString('en-US')} packets dropped from a full input backlog, ${load.kernel.retransmits.toLocaleString('en-US')} TCP segments retransmitted` : '';
  return `${ours}, irq/softirq ${load.interruptCores.toFixed(2)}, other processes ${load.otherCores.toFixed(2)} (of ${TOTAL_CORES})${byCore}${kernel}`;
}
