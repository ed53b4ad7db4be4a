/**
 * Machine instructions per HTTP request, counted by valgrind (cachegrind), for the apps of
 * bench/http.bench.js: a count does not move with the other work on a shared machine, so a
 * difference of a few percent between two routes shows in a run of two rounds, where req/s and
 * CPU time need many rounds and still straddle it.
 *
 * Each case runs in its own node process under valgrind, one keep-alive connection without a
 * socket (lib/in-memory-http.js): once with `count / 4` requests, once with `count`; the
 * difference of the two totals ÷ the difference in requests is the count per request, with start-up,
 * module loading and most of the compiling (done in the first quarter) taken out. The same client
 * loop against a stream that answers with fixed bytes gives the count of the client and the stream,
 * taken out of every row. Node runs with `--single-threaded` and a fixed young generation, so the
 * compiler and the collector do nearly the same work in every run (rounds of one case still
 * differ by up to about 2 % of a request).
 *
 * A count weighs every instruction alike: it does not see cache misses, memory stalls or the
 * kernel's socket work, which the HTTP bench's req/s does.
 * Options: rounds (each case counted that many times), count, cases.
 */
import { execFileSync, spawn } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { mapLimited } from '../loadtest/lib/http-client.js';
import { ALL_CASES, httpBenchApps } from './http.bench.js';
import { cannedConnection, inMemoryConnection } from './lib/in-memory-http.js';
import { median, withSpread } from './lib/measure.js';

export const title = 'HTTP: machine instructions per request (valgrind), @JwtShield beside the same route unshielded, no sockets';
export const defaults = { rounds: 2, count: 16_000, cases: ['bare', 'portcullisOpen', 'portcullisAdmit', 'portcullis', 'fastJwt'] };

const COUNT_FLAG = '--count-http-instructions';
const CLIENT = 'client';
const NODE_FLAGS = ['--single-threaded', '--semi-space-growth-factor=1', '--min-semi-space-size=16', '--max-semi-space-size=16'];
const BASELINE_OF = Object.fromEntries(ALL_CASES.map(([, key, baseline]) => [key, baseline]));
const LABEL_OF = Object.fromEntries(ALL_CASES.map(([label, key]) => [key, label]));
/** What the client-only stream answers: the size of the apps' answer to GET /me. */
const CANNED = 'HTTP/1.1 200 OK\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: 18\r\nETag: W/"12-abc"\r\nDate: Sun, 29 Nov 2026 12:00:00 GMT\r\nConnection: keep-alive\r\nKeep-Alive: timeout=5\r\n\r\n{"id":"player-42"}';

function valgrindVersion() {
  try {
    return execFileSync('valgrind', ['--version'], { encoding: 'utf8' }).trim();
  } catch {
    return undefined;
  }
}

/** Child mode, under valgrind: sends `amount` requests to one case's app. */
async function countOne(key, amount) {
  const { apps, token } = key === CLIENT ? { apps: {}, token: 'x' } : await httpBenchApps();
  if (key !== CLIENT && !apps[key]) throw new Error(`no app ${key} without Redis`);
  const request = `GET /me HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\nAuthorization: Bearer ${token}\r\n\r\n`;
  await (key === CLIENT ? cannedConnection(CANNED, request) : inMemoryConnection(apps[key], request))(amount);
  process.exit(0);
}

/** Instructions of one child run of `amount` requests of `key`; `live` holds the running children. */
function countRun(key, amount, live) {
  return new Promise((resolve, reject) => {
    const args = ['--tool=cachegrind', '--cache-sim=no', '--smc-check=all-non-file', '--cachegrind-out-file=/dev/null', process.execPath, ...NODE_FLAGS, fileURLToPath(import.meta.url), COUNT_FLAG, key, String(amount)];
    const child = spawn('valgrind', args, { stdio: ['ignore', 'ignore', 'pipe'] });
    live.add(child);
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('exit', (code) => {
      live.delete(child);
      const refs = /I\s+refs:\s+([\d,]+)/.exec(stderr);
      if (code === 0 && refs) resolve(Number(refs[1].replaceAll(',', '')));
      else reject(new Error(`valgrind run of ${key} (${amount}) failed with code ${code}: ${stderr.split('\n').filter((l) => !l.startsWith('==')).slice(-5).join(' ')}`));
    });
  });
}

export async function run({ rounds, count, cases }) {
  const valgrind = valgrindVersion();
  const columns = ['case', 'baseline', 'instructions per request', 'over baseline per request', 'ratio to baseline'];
  if (!valgrind) return { columns, rows: [], notes: ['valgrind not found: install it (Debian: apt-get install valgrind) to count instructions.'] };
  // The Redis cases need a redis-server per child; the count is of the in-process work.
  const countable = Object.keys(BASELINE_OF).filter((key) => !key.startsWith('portcullisRedis'));
  const unknown = cases.filter((key) => !countable.includes(key));
  if (unknown.length > 0) throw new Error(`unknown or uncountable HTTP case ${unknown.join(', ')} (countable: ${countable.join(', ')})`);
  if (!(count >= 8)) throw new Error(`--count must be at least 8 (given ${count})`);
  const keys = [...new Set([CLIENT, ...cases.flatMap((key) => [BASELINE_OF[key], key].filter(Boolean))])];
  const small = Math.round(count / 4);
  const jobs = [];
  for (let r = 0; r < rounds; r++) for (const key of keys) jobs.push({ key, r, amount: small }, { key, r, amount: count });
  const live = new Set();
  const totals = await mapLimited(jobs, availableParallelism(), (job) =>
    countRun(job.key, job.amount, live).catch((error) => {
      for (const child of live) child.kill('SIGKILL'); // the others' counts are of no use now
      throw error;
    }));
  // Per request of each round: the two runs' difference over the count − small requests between them.
  const perRequest = Object.fromEntries(keys.map((key) => [key, []]));
  for (let i = 0; i < jobs.length; i += 2) perRequest[jobs[i].key].push((totals[i + 1] - totals[i]) / (count - small));
  const client = perRequest[CLIENT];
  const served = (key) => perRequest[key].map((n, r) => n - client[r]);
  const rows = keys.filter((key) => key !== CLIENT).map((key) => {
    const baseline = BASELINE_OF[key];
    const own = served(key);
    const base = baseline && keys.includes(baseline) ? served(baseline) : undefined;
    return {
      case: LABEL_OF[key],
      baseline: base ? LABEL_OF[baseline] : '–',
      'instructions per request': Math.round(median(own)),
      'over baseline per request': base ? withSpread(own.map((n, r) => Math.round(n - base[r])), 0) : '–',
      'ratio to baseline': base ? withSpread(own.map((n, r) => base[r] / n), 3) : '–',
    };
  });
  const jwt = cases.includes('portcullis') ? served('portcullis').map((n, r) => served('portcullisOpen')[r] / n) : undefined;
  return {
    columns,
    rows,
    notes: [
      `${valgrind} (cachegrind, no cache simulation); node ${NODE_FLAGS.join(' ')}. Each case in its own process, once with ${small.toLocaleString('en-US')} and once with ${count.toLocaleString('en-US')} requests over one keep-alive connection without a socket; the count per request is the difference of the two totals over the ${(count - small).toLocaleString('en-US')} requests between them; ${rounds} round${rounds === 1 ? '' : 's'} (median, min–max in brackets).`,
      `Every row has the client's and the in-memory stream's own count taken out: ${Math.round(median(client)).toLocaleString('en-US')} instructions per request, the same client against a stream answering with fixed bytes.`,
      '"ratio to baseline" = baseline instructions ÷ case instructions: the throughput ratio of a server bound by its core if every instruction took as long. A count does not see cache misses, memory stalls or the kernel\'s socket work.',
      ...(jwt ? [`Target "@JwtShield ≥ 0.95× the same route unshielded", counted: ${withSpread(jwt, 3)}.`] : []),
    ],
  };
}

if (process.argv.includes(COUNT_FLAG)) {
  const at = process.argv.indexOf(COUNT_FLAG);
  await countOne(process.argv[at + 1], Number(process.argv[at + 2]));
}
