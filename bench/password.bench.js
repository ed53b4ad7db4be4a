/**
 * PasswordHasher.verify at the default cost (11) with a real hash, a null hash
 * and a malformed hash. The three must take about the same time, or the time of
 * a failed login tells an attacker whether the account exists. Raw bcrypt.compare
 * against a malformed hash shows the gap portcullis closes.
 */
import { performance } from 'node:perf_hooks';
import { loadConfig, PasswordHasher } from '@portcullis/core';
import bcrypt from 'bcrypt';
import { median, ratio, verdict } from './lib/measure.js';

const precise = (a, b) => Number((a / b).toPrecision(3));

export const title = 'Password verification at cost 11: real, null and malformed hash';

const WORK_FACTOR = 11;
const TARGET_SPREAD = 1.1;

/**
 * Median wall and CPU milliseconds of each case, measured interleaved (each
 * sample round runs every case once, in a rotating order) so drift from other
 * load on the machine falls on all cases alike. CPU time is the process's (the
 * libuv thread running bcrypt included), which other processes do not inflate.
 */
async function interleavedMedians(cases, times, warmup = 2) {
  const wall = cases.map(() => []);
  const cpu = cases.map(() => []);
  for (let i = 0; i < warmup + times; i++) {
    for (let k = 0; k < cases.length; k++) {
      const index = (i + k) % cases.length;
      const startCpu = process.cpuUsage();
      const start = performance.now();
      await cases[index].fn();
      const elapsed = performance.now() - start;
      const used = process.cpuUsage(startCpu);
      if (i >= warmup) {
        wall[index].push(elapsed);
        cpu[index].push((used.user + used.system) / 1000);
      }
    }
  }
  return { wallMs: wall.map(median), cpuMs: cpu.map(median) };
}

export async function run({ rounds }) {
  const config = loadConfig({ env: { SVC__SECURITY__PASSWORD__WORK_FACTOR: String(WORK_FACTOR) }, tree: {} });
  const hasher = new PasswordHasher(config);
  const password = 'correct horse battery staple';
  const stored = await hasher.hash(password);
  const malformed = '$2b$11$short';

  const cases = [
    { name: 'verify, real hash, wrong password', kind: 'verify', fn: () => hasher.verify('wrong password', stored) },
    { name: 'verify, real hash, right password', kind: 'verify', fn: () => hasher.verify(password, stored) },
    { name: 'verify, null hash (unknown account)', kind: 'verify', fn: () => hasher.verify(password, null) },
    { name: 'verify, malformed hash', kind: 'verify', fn: () => hasher.verify(password, malformed) },
    { name: 'raw bcrypt.compare, malformed hash (contrast)', kind: 'raw', fn: () => bcrypt.compare(password, malformed) },
  ];
  const times = Math.max(9, rounds * 5);
  const { wallMs, cpuMs } = await interleavedMedians(cases, times);
  const verifyCases = cases.map((c, i) => i).filter((i) => cases[i].kind === 'verify');
  const spreadOf = (ms) => ratio(Math.max(...verifyCases.map((i) => ms[i])), Math.min(...verifyCases.map((i) => ms[i])));
  const wallSpread = spreadOf(wallMs);
  const cpuSpread = spreadOf(cpuMs);

  return {
    columns: ['case', 'median ms', 'median CPU ms', 'ratio to real hash'],
    rows: cases.map((c, i) => ({
      case: c.name,
      'median ms': wallMs[i],
      'median CPU ms': cpuMs[i],
      'ratio to real hash': precise(wallMs[i], wallMs[0]),
    })),
    notes: [
      `Spread of the four verify times (slowest / fastest): ${wallSpread}× wall, ${cpuSpread}× CPU — target ≤ ${TARGET_SPREAD}× (wall ${verdict([wallSpread], { atMost: TARGET_SPREAD })}, CPU ${verdict([cpuSpread], { atMost: TARGET_SPREAD })}).`,
      `Raw bcrypt answers a malformed hash ${Math.round(wallMs[0] / wallMs[4]).toLocaleString('en-US')}× faster than a real one; PasswordHasher spends one bcrypt computation at the configured cost instead.`,
      `${times} interleaved samples per case after 2 warm-up rounds, one call at a time (the BcryptLimiter cap does not queue them). Wall time is what a client sees; CPU time is the same work without the noise of other processes on a shared machine.`,
    ],
  };
}
