#!/usr/bin/env node
/**
 * Runs the benchmarks: every `bench/<topic>.bench.js`, or only the topics named
 * on the command line, each in its own child process. Prints each table under a
 * machine header, merges the results into bench/results/latest.json (topics not
 * run keep their previous numbers) and regenerates the tables of
 * docs/performance.md between the bench markers.
 *
 * Usage: npm run bench [-- [topic…] [--rounds=N] [--duration-ms=N] [--count=N] [--cases=a,b]
 *          [--server-cpu=N] [--generator-cpu=N] [--no-pin] [--timeout-ms=N] [--no-save] [--docs-only]]
 *   e.g. npm run bench -- password jwt --rounds=3
 *        npm run bench -- http --rounds=1 --count=2000      (a smoke run of the machinery)
 * `--rounds` and `--duration-ms` default to each bench's own choice (`export const defaults`),
 * else 5 rounds of 1000 ms. `--count`: requests or messages per measured run, for the benches
 * that drive a fixed amount of traffic (http, ws). `--cases`: only the cases whose key is listed
 * (and their baselines), for benches that support it. `--server-cpu` / `--generator-cpu` (default
 * 1 and 0): the cores the socket benches pin their server process and load generator to with
 * taskset; `--no-pin` runs both unpinned. `--no-save`: print only, keep latest.json and the docs.
 * `--docs-only` runs nothing and only rewrites docs/performance.md from latest.json.
 */
import { fork } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchSection, describeMachine, machineLine, replaceGeneratedBlock } from './lib/bench-report.js';

const benchDir = dirname(fileURLToPath(import.meta.url));
const root = dirname(benchDir);
const resultsFile = join(benchDir, 'results', 'latest.json');
const docFile = join(root, 'docs', 'performance.md');
const SUFFIX = '.bench.js';

const NUMERIC_FLAGS = { rounds: 'rounds', 'duration-ms': 'durationMs', count: 'count', 'server-cpu': 'serverCpu', 'generator-cpu': 'generatorCpu', 'timeout-ms': 'timeoutMs' };
const KNOWN = '--rounds=N, --duration-ms=N, --count=N, --cases=a,b, --server-cpu=N, --generator-cpu=N, --no-pin, --timeout-ms=N, --no-save, --docs-only';

function parseArgs(argv) {
  const options = { topics: [], bench: {}, timeoutMs: 30 * 60_000, docsOnly: false, save: true };
  for (const arg of argv) {
    if (arg === '--docs-only') {
      options.docsOnly = true;
      continue;
    }
    if (arg === '--no-save') {
      options.save = false;
      continue;
    }
    if (arg === '--no-pin') {
      options.bench.pin = false;
      continue;
    }
    const flag = /^--([a-z-]+)=(\d+)$/.exec(arg);
    const cases = /^--cases=(.+)$/.exec(arg);
    if (flag && flag[1] in NUMERIC_FLAGS) {
      const name = NUMERIC_FLAGS[flag[1]];
      if (name === 'timeoutMs') options.timeoutMs = Number(flag[2]);
      else options.bench[name] = Number(flag[2]);
    } else if (cases) {
      options.bench.cases = cases[1].split(',').map((c) => c.trim()).filter(Boolean);
    } else if (arg.startsWith('--')) {
      throw new Error(`unknown option ${arg} (known: ${KNOWN})`);
    } else {
      options.topics.push(arg.endsWith(SUFFIX) ? arg.slice(0, -SUFFIX.length) : arg);
    }
  }
  return options;
}

function selectTopics(requested) {
  const available = readdirSync(benchDir).filter((f) => f.endsWith(SUFFIX)).map((f) => f.slice(0, -SUFFIX.length)).sort();
  const unknown = requested.filter((t) => !available.includes(t));
  if (unknown.length > 0) throw new Error(`no such bench: ${unknown.join(', ')} (available: ${available.join(', ') || 'none'})`);
  return requested.length > 0 ? requested : available;
}

function runInChild(topic, { bench, timeoutMs }) {
  return new Promise((resolve) => {
    const child = fork(join(benchDir, 'lib', 'bench-child.js'), [join(benchDir, topic + SUFFIX), JSON.stringify(bench)], {
      cwd: root,
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    let message;
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('message', (m) => (message = m));
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      if (message?.ok) resolve(message);
      else resolve({ ok: false, error: message?.error ?? `child exited with ${signal ?? `code ${code}`} before reporting` });
    });
  });
}

function readResults() {
  if (!existsSync(resultsFile)) return { benches: {} };
  try {
    const parsed = JSON.parse(readFileSync(resultsFile, 'utf8'));
    return { benches: parsed.benches ?? {} };
  } catch {
    console.warn(`warning: ${resultsFile} is not valid JSON; starting it afresh`);
    return { benches: {} };
  }
}

function writeAtomically(file, text) {
  mkdirSync(dirname(file), { recursive: true });
  const tmp = `${file}.tmp`;
  writeFileSync(tmp, text);
  renameSync(tmp, file);
}

async function main() {
  const options = parseArgs(process.argv.slice(2));
  const topics = options.docsOnly ? [] : selectTopics(options.topics);
  const machine = describeMachine();
  console.log(`portcullis benchmarks · ${machineLine(machine)}`);
  if (!options.docsOnly) {
    const chosen = Object.entries(options.bench).map(([k, v]) => `${k} ${Array.isArray(v) ? v.join(',') : v}`);
    console.log(`topics: ${topics.join(', ') || 'none'} · ${chosen.join(' · ') || "each bench's default rounds"}\n`);
  }

  const results = readResults();
  const failed = [];
  for (const topic of topics) {
    console.log(`== ${topic} ==`);
    const outcome = await runInChild(topic, options);
    if (!outcome.ok) {
      failed.push(topic);
      console.error(`bench ${topic} failed:\n${outcome.error}\n`);
      continue;
    }
    const entry = { title: outcome.title, measuredAt: new Date().toISOString(), seconds: outcome.seconds, machine, options: outcome.options, columns: outcome.columns, rows: outcome.rows, notes: outcome.notes };
    results.benches[topic] = entry;
    console.log(`${benchSection(topic, entry)}\n(${outcome.seconds.toFixed(1)} s)\n`);
  }

  const output = { generatedAt: new Date().toISOString(), benches: results.benches };
  if (options.save || options.docsOnly) {
    if (!options.docsOnly) writeAtomically(resultsFile, `${JSON.stringify(output, null, 2)}\n`);
    const doc = existsSync(docFile) ? readFileSync(docFile, 'utf8') : '# Performance\n';
    writeAtomically(docFile, replaceGeneratedBlock(doc, output));
    console.log(options.docsOnly ? `rewrote the tables of ${docFile} from ${resultsFile}` : `wrote ${resultsFile} and the tables of ${docFile}`);
  }
  if (failed.length > 0) {
    console.error(`failed: ${failed.join(', ')}`);
    process.exitCode = 1;
  }
}

main().catch((error) => {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
});
