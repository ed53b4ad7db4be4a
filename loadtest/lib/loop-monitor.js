/**
 * Event-loop responsiveness as the load tests define it: a 10 ms timer re-armed
 * until stopped, and the delay by which each firing is late. Shared by the game server
 * process, the control server process and the load generator, so all are measured the
 * same way.
 */
import { performance } from 'node:perf_hooks';

function cpuMicros() {
  const { user, system } = process.cpuUsage();
  return user + system;
}

/** Starts the monitor; answers `reset()` and `read()` (for the IPC handlers) and `stop()`. */
export function startLoopMonitor() {
  const loop = { max: 0, sum: 0, samples: 0, over50: 0, stalls: [] };
  const started = performance.now();
  let expected = performance.now() + 10;
  // The process's CPU (all its threads, µs) at the previous firing: a stall with as much CPU as
  // time since that firing was the process busy, not waiting for a core.
  let cpuBefore = cpuMicros();
  let timer;
  const tick = () => {
    const now = performance.now();
    const late = Math.max(0, now - expected);
    const cpuNow = cpuMicros();
    const cpuMs = (cpuNow - cpuBefore) / 1000;
    cpuBefore = cpuNow;
    loop.max = Math.max(loop.max, late);
    loop.sum += late;
    loop.samples++;
    if (late >= 50) {
      loop.over50++;
      if (loop.stalls.length < 20) loop.stalls.push({ atS: Number(((now - started) / 1000).toFixed(2)), ms: Math.round(late), cpuMs: Math.round(cpuMs), sinceMs: Math.round(late + 10) });
    }
    expected = now + 10;
    timer = setTimeout(tick, 10).unref();
  };
  timer = setTimeout(tick, 10).unref();
  return {
    reset() {
      Object.assign(loop, { max: 0, sum: 0, samples: 0, over50: 0, stalls: [] });
      return null;
    },
    // nowS: the monitor's clock, the one a stall's atS is read on.
    read: () => ({ maxMs: loop.max, meanMs: loop.samples ? loop.sum / loop.samples : 0, samples: loop.samples, over50: loop.over50, stalls: loop.stalls, nowS: (performance.now() - started) / 1000 }),
    stop: () => clearTimeout(timer),
  };
}
