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

function cpuTicks() {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0].trim().split(/\s+/).slice(1).map(Number);
  const [user, nice, system, , , irq, softirq, steal] = fields;
  return { busy: user + nice + system + irq + softirq + steal, softirq: softirq + irq };
}

function processTicks(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return 0;
  }
}

/**
 * Starts measuring; `stop()` answers, in cores over the interval: `oursCores` (the
 * given processes), `interruptCores` (irq and softirq: mostly loopback networking
 * of this very test), `otherCores` (everything else: other processes), or undefined off Linux.
 */
export function watchMachineLoad(pids) {
  let start;
  const ours = () => pids().reduce((n, pid) => n + processTicks(pid), 0);
  try {
    start = { at: Date.now(), cpu: cpuTicks(), ours: ours() };
  } catch {
    return { stop: () => undefined };
  }
  return {
    stop() {
      const perSecond = TICKS_PER_SECOND * ((Date.now() - start.at) / 1000);
      const cpu = cpuTicks();
      const busy = (cpu.busy - start.cpu.busy) / perSecond;
      const interrupts = (cpu.softirq - start.cpu.softirq) / perSecond;
      const mine = (ours() - start.ours) / perSecond;
      return { oursCores: mine, interruptCores: interrupts, otherCores: Math.max(0, busy - mine - interrupts) };
    },
  };
}

/** "machine: this test 1.31 cores, interrupts 0.42, other processes 0.05" */
export function formatMachineLoad(load) {
  if (!load) return 'machine load not measured (no /proc)';
  return `this test ${load.oursCores.toFixed(2)} cores, irq/softirq ${load.interruptCores.toFixed(2)}, other processes ${load.otherCores.toFixed(2)} (of ${TOTAL_CORES})`;
}
