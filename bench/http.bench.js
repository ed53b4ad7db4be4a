/**
 * HTTP throughput and server CPU per request of a `@JwtShield` route (50 keep-alive
 * connections to 127.0.0.1, lib/http-load.js) beside the same route unshielded on a portcullis app
 * and on bare express 5, behind passport-jwt (string secret and KeyObject), a
 * hand-written jsonwebtoken middleware and fast-jwt with its cache; and the median
 * login time for an unknown account vs a wrong password at bcrypt cost 11.
 *
 * The servers run in a child process (this file with --serve-http-bench) pinned to
 * one core, the load generator on another (taskset; see lib/cpu-pinning.js). Every
 * run sends a fixed number of requests; every case runs right beside its baseline (before it
 * every other round), and the tables give the median of those paired ratios with their min–max.
 * Options: rounds, count (requests per run), cases (keys, e.g. portcullis,portcullisRedis),
 * pin, serverCpu, generatorCpu.
 */
import { once } from 'node:events';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import 'reflect-metadata';
import express from 'express';
import { createVerifier } from 'fast-jwt';
import jwt from 'jsonwebtoken';
import passportModule from 'passport';
import passportJwt from 'passport-jwt';
import { container as rootContainer } from 'tsyringe';
import {
  JwtShield, JwtTokenIssuer, LOGGER_FACTORY, Shield, PORTCULLIS_CONFIG, PORTCULLIS_CONTAINER, SIGNING_KEY, loadConfig,
  registerAccountServices, registerSessionServices, resolveSigningKey, silentLoggerFactory,
} from '@portcullis/core';
import { Controller, Get, JwtAuthController, createPortcullisApp, principalId } from '@portcullis/express';
import { serveParent } from './lib/child-rpc.js';
import { fixedCountLoad } from './lib/http-load.js';
import { pinProcess, planPinning, watchCore } from './lib/cpu-pinning.js';
import { median, runPair, verdict, withSpread } from './lib/measure.js';
import { findRedisServer, startRedis } from './lib/redis.js';
import { startServerProcess } from './lib/server-process.js';

export const title = 'HTTP: @JwtShield route vs the same route unshielded, bare express 5, passport-jwt, jsonwebtoken and fast-jwt (50 connections, fixed request count)';

const SERVE_FLAG = '--serve-http-bench';
/** ASCII key text: its UTF-8 bytes are the HMAC key, so string-secret verifiers check the same tokens. */
const KEY_TEXT = 'portcullis-http-bench-key-0123456789-abcdefghijkl';
const CONNECTIONS = 50;

function config(env = {}) {
  return loadConfig({
    env: { SVC__SECURITY__MODE: 'jwt', SVC__SECURITY__KEY: Buffer.from(KEY_TEXT).toString('base64'), SVC__SECURITY__ACCESS_TOKEN_MINUTES: '120', ...env },
    tree: {},
  });
}

async function portcullisContainer(cfg) {
  const container = rootContainer.createChildContainer();
  container.register(PORTCULLIS_CONFIG, { useValue: cfg });
  container.register(LOGGER_FACTORY, { useValue: silentLoggerFactory });
  container.register(SIGNING_KEY, { useValue: resolveSigningKey(cfg, silentLoggerFactory.create('bench')) });
  container.register(PORTCULLIS_CONTAINER, { useValue: container });
  const stores = registerSessionServices(container);
  await stores.ready();
  registerAccountServices(container);
  return container;
}

/** `GET /me` behind `@JwtShield`, decorated by hand (plain JavaScript has no decorator syntax). */
class MeController {
  me(req) {
    return { id: principalId(req) };
  }
}
Controller('/')(MeController);
for (const decorate of [Get('/me'), JwtShield()]) decorate(MeController.prototype, 'me', Object.getOwnPropertyDescriptor(MeController.prototype, 'me'));

/** The same route on a portcullis app with no shield: what the shield itself costs. */
class OpenMeController {
  me() {
    return { id: 'player-42' };
  }
}
Controller('/')(OpenMeController);
Get('/me')(OpenMeController.prototype, 'me', Object.getOwnPropertyDescriptor(OpenMeController.prototype, 'me'));

/**
 * A shield that admits a request with a bearer at once, with a fixed principal: the guard's own
 * cost on a route (its request context, the enforcer, the recorded principal) without JwtAuth's.
 */
class AdmitBearer {
  authenticate(ctx) {
    return ctx.credential ? { ok: true, principal: FIXED_PRINCIPAL } : { ok: false, code: 'unauthorized' };
  }
}
const FIXED_PRINCIPAL = Object.freeze({ id: 'player-42', name: undefined, roles: Object.freeze([]), claims: Object.freeze({}), via: 'jwt' });

/** `GET /me` behind `@Shield(AdmitBearer)`. */
class AdmitMeController {
  me(req) {
    return { id: principalId(req) };
  }
}
Controller('/')(AdmitMeController);
for (const decorate of [Get('/me'), Shield(AdmitBearer)]) decorate(AdmitMeController.prototype, 'me', Object.getOwnPropertyDescriptor(AdmitMeController.prototype, 'me'));

class BenchAuthController extends JwtAuthController {}

function passportApp(secretOrKey, cfg) {
  const passport = new passportModule.Passport();
  const { Strategy, ExtractJwt } = passportJwt;
  const options = { jwtFromRequest: ExtractJwt.fromAuthHeaderAsBearerToken(), secretOrKey, algorithms: ['HS256'], issuer: cfg.security.issuer, audience: cfg.security.audience };
  passport.use(new Strategy(options, (payload, done) => done(null, { id: payload.sub })));
  const app = express();
  app.use(passport.initialize());
  app.get('/me', passport.authenticate('jwt', { session: false }), (req, res) => res.json({ id: req.user.id }));
  return app;
}

function jsonwebtokenApp(keyObject, cfg) {
  const app = express();
  const verifyOptions = { algorithms: ['HS256'], issuer: cfg.security.issuer, audience: cfg.security.audience };
  app.get('/me', (req, res, next) => {
    const match = /^bearer +(.+)$/i.exec(req.headers.authorization ?? '');
    if (!match) return res.status(401).end();
    try {
      req.user = jwt.verify(match[1], keyObject, verifyOptions);
    } catch {
      return res.status(401).end();
    }
    next();
  }, (req, res) => res.json({ id: req.user.sub }));
  return app;
}

function fastJwtApp(cfg) {
  const verify = createVerifier({ key: KEY_TEXT, algorithms: ['HS256'], cache: true, allowedIss: cfg.security.issuer, allowedAud: cfg.security.audience });
  const app = express();
  app.get('/me', (req, res, next) => {
    const match = /^bearer +(.+)$/i.exec(req.headers.authorization ?? '');
    if (!match) return res.status(401).end();
    try {
      req.user = verify(match[1]);
    } catch {
      return res.status(401).end();
    }
    next();
  }, (req, res) => res.json({ id: req.user.sub }));
  return app;
}

/**
 * Every app this bench measures, keyed by case (`login` is the bcrypt login app), and an access
 * token they all accept; the Redis cases only with `redisUrl`. bench/instructions.bench.js drives
 * the same apps without sockets.
 */
export async function httpBenchApps({ redisUrl } = {}) {
  const cfg = config();
  const container = await portcullisContainer(cfg);
  const onRedis = { SVC__PERSISTENCE__CACHE__PROVIDER: 'redis', SVC__PERSISTENCE__CACHE__URL: redisUrl };
  const redisContainer = redisUrl ? await portcullisContainer(config(onRedis)) : undefined;
  const redisNearContainer = redisUrl ? await portcullisContainer(config({ ...onRedis, SVC__SECURITY__SESSION__JWT_NEAR_CACHE_SECONDS: '5' })) : undefined;
  const token = container.resolve(JwtTokenIssuer).issueLoginPair('player-42', { name: 'alice' }).accessToken;
  const keyObject = container.resolve(SIGNING_KEY).keyObject;
  const bare = express();
  bare.get('/me', (req, res) => res.json({ id: 'player-42' }));
  const loginContainer = await portcullisContainer(config({ SVC__SECURITY__PASSWORD__WORK_FACTOR: '11', SVC__SECURITY__LOCKOUT__MAX_FAILURES: '1000000' }));
  const apps = {
    bare,
    portcullis: createPortcullisApp(container, { controllers: [MeController] }),
    portcullisNoMemo: createPortcullisApp(container, { controllers: [MeController], connectionMemo: false }),
    portcullisOpen: createPortcullisApp(container, { controllers: [OpenMeController] }),
    portcullisOpenControl: createPortcullisApp(container, { controllers: [OpenMeController] }),
    portcullisAdmit: createPortcullisApp(container, { controllers: [AdmitMeController] }),
    ...(redisContainer ? { portcullisRedis: createPortcullisApp(redisContainer, { controllers: [MeController] }) } : {}),
    ...(redisNearContainer ? { portcullisRedisNear: createPortcullisApp(redisNearContainer, { controllers: [MeController] }) } : {}),
    passportString: passportApp(KEY_TEXT, cfg),
    passportKeyObject: passportApp(keyObject, cfg),
    jsonwebtoken: jsonwebtokenApp(keyObject, cfg),
    fastJwt: fastJwtApp(cfg),
    login: createPortcullisApp(loginContainer, { controllers: [BenchAuthController] }),
  };
  return { apps, token };
}

/** Child-process mode: builds every server, reports ports and a token, serves until told to stop. */
async function serve() {
  const { apps, token } = await httpBenchApps({ redisUrl: process.env.BENCH_REDIS_URL });
  const ports = {};
  const servers = [];
  for (const [name, app] of Object.entries(apps)) {
    const server = app.listen(0, '127.0.0.1');
    await once(server, 'listening');
    servers.push(server);
    ports[name] = server.address().port;
  }
  serveParent(
    {
      cpu: () => (({ user, system }) => user + system)(process.cpuUsage()),
      close: () => {
        for (const server of servers) server.closeAllConnections();
        setImmediate(() => process.exit(0));
        return null;
      },
    },
    { ports, token },
  );
}

/** Sends exactly `amount` requests to `GET /me` over CONNECTIONS keep-alive connections. */
function load(port, token, amount) {
  return fixedCountLoad({ port, path: '/me', headers: { authorization: `Bearer ${token}` }, connections: CONNECTIONS, amount });
}

async function expectStatus(url, token, status) {
  const response = await fetch(url, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  if (response.status !== status) throw new Error(`bench setup: ${url} answered ${response.status}, expected ${status}`);
}

async function post(url, body) {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  await response.arrayBuffer();
  return response.status;
}

/** Alternates unknown-account and wrong-password logins; answers the median ms of each. */
async function loginTimes(base, times) {
  if ((await post(`${base}/auth/signup`, { email: 'bench@example.com', username: 'bench', password: 'correct horse battery' })) !== 201) {
    throw new Error('bench setup: signup failed');
  }
  const unknown = [];
  const wrong = [];
  for (let i = -2; i < times; i++) {
    for (const [samples, body] of [[unknown, { username: 'nobody-here', password: 'wrong password!' }], [wrong, { username: 'bench', password: 'wrong password!' }]]) {
      const start = performance.now();
      if ((await post(`${base}/auth/login/unamepwd`, body)) !== 401) throw new Error('bench setup: a bad login did not answer 401');
      if (i >= 0) samples.push(performance.now() - start);
    }
  }
  return { unknown: median(unknown), wrong: median(wrong) };
}

const BASELINES = { bare: 'bare express', portcullisOpen: 'portcullis unshielded' };

/** [label, key, baseline]: every case is measured right after a run of its baseline (bench/instructions.bench.js reads the labels too). */
export const ALL_CASES = [
  ['bare express 5, unshielded', 'bare', undefined],
  ['portcullis app, same route unshielded', 'portcullisOpen', 'bare'],
  ['control: a second, identical unshielded portcullis app', 'portcullisOpenControl', 'portcullisOpen'],
  ['portcullis @Shield admitting any bearer at once (the guard without JwtAuth)', 'portcullisAdmit', 'portcullisOpen'],
  ['portcullis @JwtShield', 'portcullis', 'portcullisOpen'],
  ['portcullis @JwtShield, connectionMemo: false', 'portcullisNoMemo', 'portcullisOpen'],
  ['portcullis @JwtShield, Redis store', 'portcullisRedis', 'portcullisOpen'],
  ['portcullis @JwtShield, Redis store, jwt-near-cache-seconds 5', 'portcullisRedisNear', 'portcullisOpen'],
  ['passport-jwt, string secret', 'passportString', 'bare'],
  ['passport-jwt, KeyObject', 'passportKeyObject', 'bare'],
  ['jsonwebtoken middleware, KeyObject', 'jsonwebtoken', 'bare'],
  ['fast-jwt, cache on', 'fastJwt', 'bare'],
];

export const defaults = { rounds: 10, count: 10_000 };

/** The cases to measure as pairs, and every key that runs (cases and their baselines). */
function selectCases(ports, only) {
  const available = ALL_CASES.filter(([, key]) => ports[key] !== undefined);
  const chosen = only ? available.filter(([, key, baseline]) => baseline !== undefined && only.includes(key)) : available.filter(([, , baseline]) => baseline);
  if (only) {
    const unknown = only.filter((key) => key !== 'login' && !available.some(([, k]) => k === key));
    if (unknown.length > 0) throw new Error(`unknown or unavailable HTTP case ${unknown.join(', ')} (known: ${available.map(([, k]) => k).join(', ')}, login)`);
  }
  const running = new Set(chosen.flatMap(([, key, baseline]) => [baseline, key]));
  return { pairs: chosen, rows: available.filter(([, key]) => running.has(key)) };
}

export async function run({ rounds, count, cases: only, pin = true, serverCpu = 1, generatorCpu = 0 }) {
  const plan = planPinning({ pin, serverCpu, generatorCpu });
  if (plan.warning) console.warn(`warning: ${plan.warning}`);
  pinProcess(plan.generatorCpu);
  const redisBinary = findRedisServer();
  const redis = redisBinary ? await startRedis(redisBinary) : undefined;
  const server = await startServerProcess(fileURLToPath(import.meta.url), [SERVE_FLAG], {
    env: { ...process.env, ...(redis ? { BENCH_REDIS_URL: redis.url } : {}) },
    cpu: plan.serverCpu,
  });
  const { ports, token } = server.info;
  const { pairs, rows: running } = selectCases(ports, only);
  try {
    const url = (key) => `http://127.0.0.1:${ports[key]}/me`;
    for (const [, key] of running) {
      await expectStatus(url(key), token, 200);
      if (!['bare', 'portcullisOpen', 'portcullisOpenControl'].includes(key)) await expectStatus(url(key), undefined, 401);
    }
    const samples = Object.fromEntries(running.map(([, key]) => [key, { rps: [], p50: [], cpu: [], rpsRatio: [], cpuRatio: [], cpuOver: [], failures: 0 }]));
    const others = [];
    const measure = async (key, amount = count) => {
      const watch = watchCore(plan.serverCpu, server.pid);
      const cpuBefore = await server.call('cpu');
      const result = await load(ports[key], token, amount);
      const cpuAfter = await server.call('cpu');
      const share = watch.stop();
      if (share !== undefined) others.push({ share, key });
      const sample = { rps: result.total / result.seconds, cpu: (cpuAfter - cpuBefore) / Math.max(1, result.total) };
      samples[key].rps.push(sample.rps);
      samples[key].p50.push(result.p50);
      samples[key].cpu.push(sample.cpu);
      samples[key].failures += result.non2xx + result.errors;
      return sample;
    };
    const warmup = Math.max(1000, Math.round(count / 2));
    for (const [, key] of running) await load(ports[key], token, warmup);
    for (const key of Object.keys(samples)) Object.assign(samples[key], { rps: [], p50: [], cpu: [], failures: 0 });
    for (let r = 0; r < rounds; r++) {
      // Each case runs right beside its baseline and is compared with that run, so the bursts
      // of a shared machine hit both sides of a ratio alike. The order of the pairs rotates every
      // round; within a pair, runPair alternates which runs first.
      for (let i = 0; i < pairs.length; i++) {
        const [, key, baselineKey] = pairs[(i + r) % pairs.length];
        const { baseline, sample } = await runPair(r, () => measure(baselineKey), () => measure(key));
        samples[key].rpsRatio.push(sample.rps / baseline.rps);
        samples[key].cpuRatio.push(baseline.cpu / sample.cpu);
        samples[key].cpuOver.push(sample.cpu - baseline.cpu);
      }
    }
    const paired = new Set(pairs.map(([, key]) => key));
    const rows = running.map(([label, key, baselineKey]) => {
      const s = samples[key];
      const measured = paired.has(key);
      return {
        case: label,
        baseline: measured ? BASELINES[baselineKey] : '–',
        'req/s': Math.round(median(s.rps)),
        'req/s ratio to baseline': measured ? withSpread(s.rpsRatio, 2) : '–',
        'server CPU µs/req': Number(median(s.cpu).toFixed(1)),
        'CPU over baseline µs/req': measured ? withSpread(s.cpuOver, 1) : '–',
        'CPU-bound ratio to baseline': measured ? withSpread(s.cpuRatio, 2) : '–',
        'p50 ms': Number(median(s.p50).toFixed(2)),
      };
    });
    const failed = running.filter(([, key]) => samples[key].failures > 0).map(([label, key]) => `${label}: ${samples[key].failures} failed requests`);
    const notes = [
      `${plan.enabled ? `Pinned: ${plan.line}.` : `NOT pinned: ${plan.warning}; the generator and the server compete for the same cores.`} ${CONNECTIONS} keep-alive connections (bench/lib/http-load.js, closed loop), exactly ${count.toLocaleString('en-US')} requests per run (after one warm-up run of every case); ${rounds} round${rounds === 1 ? '' : 's'}; in every round each case runs right beside its baseline (column "baseline"; after it in even rounds, before it in odd ones), in an order that rotates by round.`,
      'Ratio columns: the median over the rounds of each case\'s ratio to the baseline run beside it, with the smallest and largest of those paired ratios in brackets. "req/s" and "server CPU µs/req" are medians over every run of the row (a baseline row over all its runs). "server CPU µs/req" is the server process\'s own process.cpuUsage() (user + system, all its threads) over the run ÷ requests answered; "CPU over baseline" is the paired difference, what the case adds per request; "CPU-bound ratio" = baseline CPU/req ÷ case CPU/req, the throughput ratio a server limited by its core would show.',
      'Every case answers GET /me with {id}; every shielded case refuses a request without a token (checked before measuring), and every JWT case verifies HS256, issuer and audience. The @Shield row admits any bearer with a fixed principal: it prices the guard a shielded route runs (the request\'s AuthContext, the enforcer, the principal recorded for the handler), and the @JwtShield row minus it what JwtAuth adds. portcullis apps disable express\'s X-Powered-By header, so portcullis cases are measured against the same route unshielded on a portcullis app, and other libraries against bare express.',
      'portcullis @JwtShield keeps the verified JWT per keep-alive connection (AuthContext memo): a repeated identical token skips the signature check until its exp; expiry and invalidation (upgrade, logout, family revocation) are checked on every request. connectionMemo: false verifies the signature on every request.',
      redis
        ? `portcullis @JwtShield, Redis store: the invalidation markers are read from a local redis-server (one MGET for the requests of one event-loop turn), as on a fleet; the redis-server runs ${plan.enabled ? `on the generator's core (${plan.generatorCpu}), so its CPU is not in the server's column` : 'unpinned'}. With session:jwt-near-cache-seconds 5 a JWT found valid is trusted for up to 5 s per process, dropped at once by revocation events.`
        : 'redis-server not found: the Redis rows are missing from this run.',
    ];
    if (others.length > 0) {
      const worst = others.reduce((a, b) => (b.share > a.share ? b : a));
      notes.push(`Other work on the server's core during the measured runs (other processes, interrupts): median ${(median(others.map((o) => o.share)) * 100).toFixed(1)} %, largest ${(worst.share * 100).toFixed(1)} % (a run of ${worst.key}). Runs with more than a few % are noise: rerun on a quieter machine.`);
    }
    const jwt = samples.portcullis;
    if (paired.has('portcullis')) {
      notes.push(`Target "@JwtShield ≥ 0.95× the same route unshielded": req/s ratio ${withSpread(jwt.rpsRatio, 2)} (${verdict(jwt.rpsRatio, { atLeast: 0.95 })}), CPU-bound ratio ${withSpread(jwt.cpuRatio, 2)}, server CPU over baseline ${withSpread(jwt.cpuOver, 1)} µs per request.`);
    }
    if (!only || only.includes('login')) {
      const login = await loginTimes(`http://127.0.0.1:${ports.login}`, 15);
      const blank = Object.fromEntries(['baseline', 'req/s', 'req/s ratio to baseline', 'server CPU µs/req', 'CPU over baseline µs/req', 'CPU-bound ratio to baseline'].map((c) => [c, '–']));
      rows.push(...[['unknown account', login.unknown], ['wrong password', login.wrong]].map(([what, ms]) => ({ case: `POST /auth/login/unamepwd, ${what} (cost 11)`, ...blank, 'p50 ms': Number(ms.toFixed(1)) })));
      const apart = Math.abs(login.unknown / login.wrong - 1) * 100;
      notes.push(`Login timing (median of 15, one at a time; "p50 ms" column): unknown account ${login.unknown.toFixed(1)} ms vs wrong password ${login.wrong.toFixed(1)} ms, ${apart.toFixed(1)}% apart (target: within 10%).`);
    }
    return {
      columns: ['case', 'baseline', 'req/s', 'req/s ratio to baseline', 'server CPU µs/req', 'CPU over baseline µs/req', 'CPU-bound ratio to baseline', 'p50 ms'],
      rows,
      notes: [...notes, ...failed],
    };
  } finally {
    await server.stop();
    await redis?.stop();
  }
}

if (process.argv.includes(SERVE_FLAG)) await serve();
