/**
 * Signup and login throughput through LoginService (bcrypt at the default cost 11), with
 * accounts in memory and in PostgreSQL, beside the account store's own calls timed alone:
 * how much of a signup or a login the durable store costs. Starts its own PostgreSQL (fsync
 * on) on a free port and removes it afterwards.
 */
import 'reflect-metadata';
import { performance } from 'node:perf_hooks';
import { ACCOUNT_STORE, LoginService, loadConfig, registerPortcullis, silentLoggerFactory } from '@portcullis/core';
import { container as rootContainer } from 'tsyringe';
import { median } from './lib/measure.js';
import { findPostgresBinDir, startPostgres } from './lib/postgres.js';

export const title = 'Signup and login throughput, accounts in memory and in PostgreSQL (bcrypt cost 11)';
export const defaults = { rounds: 3 };

const KEY = Buffer.alloc(32, 9).toString('base64');
const PASSWORD = 'correct horse battery staple';
const precise = (a, b) => Number((a / b).toPrecision(3));

function server(persistence) {
  const config = loadConfig({ env: {}, tree: { svc: { security: { mode: 'jwt', key: KEY }, persistence } } });
  const container = rootContainer.createChildContainer();
  const registration = registerPortcullis(container, { config, loggers: silentLoggerFactory });
  return { registration, logins: container.resolve(LoginService), accounts: container.resolve(ACCOUNT_STORE) };
}

/** Runs `count` calls of `fn(i)`, `inFlight` at a time; answers calls per second. */
async function rate(count, inFlight, fn) {
  let next = 0;
  const start = performance.now();
  await Promise.all(Array.from({ length: inFlight }, async () => {
    while (next < count) await fn(next++);
  }));
  return (count * 1000) / (performance.now() - start);
}

let sequence = 0;
/** Median over `rounds` of each measurement on one provider; names are fresh every call. */
async function measureProvider({ logins, accounts }, rounds) {
  const samples = { signup: [], login: [], signupStore: [], loginStore: [], signupMs: [], signupStoreMs: [] };
  for (let r = 0; r < rounds; r++) {
    const prefix = `b${sequence++}r${r}x`;
    const name = (i) => `${prefix}${i}`;
    samples.signup.push(await rate(24, 4, (i) => logins.signup({ username: name(i), email: `${name(i)}@example.com`, password: PASSWORD })));
    samples.login.push(await rate(24, 4, (i) => logins.loginWithUsername({ username: name(i), password: PASSWORD })));
    // The store's part of a signup (two look-ups, one insert) and of a login (one look-up), without bcrypt.
    const storeSignup = async (i) => {
      const n = `${prefix}s${i}`;
      await accounts.findByUsername(n);
      await accounts.findByEmail(`${n}@example.com`);
      await accounts.create({ username: n, email: `${n}@example.com`, passwordHash: null });
    };
    samples.signupStore.push(await rate(2000, 4, storeSignup));
    samples.loginStore.push(await rate(2000, 4, (i) => accounts.findByUsername(name(i % 24))));
    const one = async (fn) => {
      const start = performance.now();
      await fn();
      return performance.now() - start;
    };
    samples.signupMs.push(await one(() => logins.signup({ username: `${prefix}one`, email: `${prefix}one@example.com`, password: PASSWORD })));
    const storeMs = [];
    for (let i = 0; i < 50; i++) storeMs.push(await one(() => storeSignup(`one${i}`)));
    samples.signupStoreMs.push(median(storeMs));
  }
  return Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, median(v)]));
}

export async function run({ rounds = 3 } = {}) {
  const notes = [];
  const results = [];
  const memory = server({ cache: { provider: 'inmemory' } });
  await memory.registration.ready();
  results.push(['memory', await measureProvider(memory, rounds)]);
  await memory.registration.close();

  const binDir = findPostgresBinDir();
  if (binDir) {
    const postgres = await startPostgres(binDir);
    try {
      const durable = server({ cache: { provider: 'inmemory' }, accounts: { provider: 'postgres', url: postgres.url } });
      await durable.registration.ready();
      results.push(['PostgreSQL', await measureProvider(durable, rounds)]);
      await durable.registration.close();
    } finally {
      await postgres.stop();
    }
  } else {
    notes.push('PostgreSQL not found: the PostgreSQL rows are missing from this run');
  }

  const base = results[0][1];
  const rows = [];
  for (const [provider, m] of results) {
    const share = (storeOps, fullOps) => `${((fullOps / storeOps) * 100).toFixed(1)} %`;
    rows.push(
      { case: `signup (LoginService), ${provider}`, 'ops/s': Math.round(m.signup), 'ms/op': Number((1000 / m.signup).toFixed(2)), 'ratio to memory': precise(m.signup, base.signup), "store's share": share(m.signupStore, m.signup) },
      { case: `login (LoginService), ${provider}`, 'ops/s': Math.round(m.login), 'ms/op': Number((1000 / m.login).toFixed(2)), 'ratio to memory': precise(m.login, base.login), "store's share": share(m.loginStore, m.login) },
      { case: `store calls of a signup alone, ${provider}`, 'ops/s': Math.round(m.signupStore), 'ms/op': Number((1000 / m.signupStore).toFixed(3)), 'ratio to memory': precise(m.signupStore, base.signupStore), "store's share": '–' },
      { case: `store call of a login alone, ${provider}`, 'ops/s': Math.round(m.loginStore), 'ms/op': Number((1000 / m.loginStore).toFixed(3)), 'ratio to memory': precise(m.loginStore, base.loginStore), "store's share": '–' },
    );
    notes.push(`${provider}: one signup alone took ${m.signupMs.toFixed(1)} ms, its store calls alone ${m.signupStoreMs.toFixed(2)} ms (${((m.signupStoreMs / m.signupMs) * 100).toFixed(1)} % of it)`);
  }
  notes.push(
    "4 calls in flight, 24 signups and 24 logins per round, 2,000 store-only calls; the median of the rounds. \"store's share\" = the time the store's calls take alone at the same concurrency, as a part of the time of the whole operation",
    'a signup is two look-ups, one bcrypt hash and one insert; a login one look-up and one bcrypt compare (plus the lockout counters, in memory here): bcrypt dominates both',
    'PostgreSQL here runs on the same machine with fsync on; over a network each store call adds a round trip',
  );
  return { columns: ['case', 'ops/s', 'ms/op', 'ratio to memory', "store's share"], rows, notes };
}
