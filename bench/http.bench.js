/**
 * HTTP throughput of a `@JwtShield` route (autocannon, 50 connections, 127.0.0.1)
 * beside the same route unshielded on bare express 5, behind passport-jwt (string
 * secret and KeyObject), behind a hand-written jsonwebtoken middleware and behind
 * fast-jwt with its cache; and the median login time for an unknown account vs a
 * wrong password at bcrypt cost 11.
 *
 * The servers run in a child process (this file with --serve-http-bench) so the
 * load generator and the servers do not share an event loop; each server gets the
 * same token and answers the same `{id}` body.
 */
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import 'reflect-metadata';
import autocannon from 'autocannon';
import express from 'express';
import { createVerifier } from 'fast-jwt';
import jwt from 'jsonwebtoken';
import passportModule from 'passport';
import passportJwt from 'passport-jwt';
import { container as rootContainer } from 'tsyringe';
import {
  JwtShield, JwtTokenIssuer, LOGGER_FACTORY, PORTCULLIS_CONFIG, PORTCULLIS_CONTAINER, SIGNING_KEY, loadConfig,
  registerAccountServices, registerSessionServices, resolveSigningKey, silentLoggerFactory,
} from '@portcullis/core';
import { Controller, Get, JwtAuthController, createPortcullisApp, principalId } from '@portcullis/express';
import { median } from './lib/measure.js';
import { findRedisServer, startRedis } from './lib/redis.js';

export const title = 'HTTP: @JwtShield route vs bare express 5, passport-jwt and jsonwebtoken (autocannon, 50 connections)';

const SERVE_FLAG = '--serve-http-bench';
/** ASCII key text: its UTF-8 bytes are the HMAC key, so string-secret verifiers check the same tokens. */
const KEY_TEXT = 'portcullis-http-bench-key-0123456789-abcdefghijkl';
const CONNECTIONS = 50;
const ROUND_SECONDS = 3;

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

/** Child-process mode: builds every server, reports ports and a token, serves until told to stop. */
async function serve() {
  const cfg = config();
  const container = await portcullisContainer(cfg);
  const redisUrl = process.env.BENCH_REDIS_URL;
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
    ...(redisContainer ? { portcullisRedis: createPortcullisApp(redisContainer, { controllers: [MeController] }) } : {}),
    ...(redisNearContainer ? { portcullisRedisNear: createPortcullisApp(redisNearContainer, { controllers: [MeController] }) } : {}),
    passportString: passportApp(KEY_TEXT, cfg),
    passportKeyObject: passportApp(keyObject, cfg),
    jsonwebtoken: jsonwebtokenApp(keyObject, cfg),
    fastJwt: fastJwtApp(cfg),
    login: createPortcullisApp(loginContainer, { controllers: [BenchAuthController] }),
  };
  const ports = {};
  const servers = [];
  for (const [name, app] of Object.entries(apps)) {
    const server = app.listen(0, '127.0.0.1');
    await once(server, 'listening');
    servers.push(server);
    ports[name] = server.address().port;
  }
  process.send({ ports, token });
  process.on('message', (message) => {
    if (message === 'cpu') {
      const { user, system } = process.cpuUsage();
      process.send({ cpuMicros: user + system });
      return;
    }
    for (const server of servers) server.closeAllConnections();
    process.exit(0);
  });
}

/** Total CPU time (µs) the server process has used so far. */
async function serverCpu(child) {
  child.send('cpu');
  const [{ cpuMicros }] = await once(child, 'message');
  return cpuMicros;
}

function load(url, token, seconds) {
  return autocannon({ url, connections: CONNECTIONS, duration: seconds, headers: { authorization: `Bearer ${token}` } });
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

const ALL_CASES = [
  ['bare express 5, unshielded', 'bare'],
  ['portcullis app, same route unshielded', 'portcullisOpen'],
  ['portcullis @JwtShield', 'portcullis'],
  ['portcullis @JwtShield, connectionMemo: false', 'portcullisNoMemo'],
  ['portcullis @JwtShield, Redis store', 'portcullisRedis'],
  ['portcullis @JwtShield, Redis store, jwt-near-cache-seconds 5', 'portcullisRedisNear'],
  ['passport-jwt, string secret', 'passportString'],
  ['passport-jwt, KeyObject', 'passportKeyObject'],
  ['jsonwebtoken middleware, KeyObject', 'jsonwebtoken'],
  ['fast-jwt, cache on', 'fastJwt'],
];

export async function run({ rounds = 5 } = {}) {
  const redisBinary = findRedisServer();
  const redis = redisBinary ? await startRedis(redisBinary) : undefined;
  const child = fork(fileURLToPath(import.meta.url), [SERVE_FLAG], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, ...(redis ? { BENCH_REDIS_URL: redis.url } : {}) },
  });
  const [{ ports, token }] = await once(child, 'message');
  const CASES = ALL_CASES.filter(([, name]) => ports[name] !== undefined);
  try {
    const url = (name) => `http://127.0.0.1:${ports[name]}/me`;
    for (const [, name] of CASES) {
      await expectStatus(url(name), token, 200);
      if (name !== 'bare' && name !== 'portcullisOpen') await expectStatus(url(name), undefined, 401);
    }
    const samples = Object.fromEntries(CASES.map(([, name]) => [name, { rps: [], p50: [], cpu: [], rpsRatio: [], cpuRatio: [], failures: 0 }]));
    const measure = async (name) => {
      const cpuBefore = await serverCpu(child);
      const result = await load(url(name), token, ROUND_SECONDS);
      const cpuAfter = await serverCpu(child);
      const sample = { rps: result.requests.average, cpu: (cpuAfter - cpuBefore) / Math.max(1, result.requests.total) };
      samples[name].rps.push(sample.rps);
      samples[name].p50.push(result.latency.p50);
      samples[name].cpu.push(sample.cpu);
      samples[name].failures += result.non2xx + result.errors + result.timeouts;
      return sample;
    };
    for (const [, name] of CASES) await load(url(name), token, 1);
    const roundCount = Math.max(1, Math.min(rounds, 5));
    const others = CASES.filter(([, name]) => name !== 'bare');
    for (let r = 0; r < roundCount; r++) {
      // Each case runs right after a bare-express run and is compared with it, so the bursts of
      // a shared machine hit both sides of a ratio alike. The order rotates every round.
      for (let i = 0; i < others.length; i++) {
        const [, name] = others[(i + r) % others.length];
        const bare = await measure('bare');
        const sample = await measure(name);
        samples[name].rpsRatio.push(sample.rps / bare.rps);
        samples[name].cpuRatio.push(bare.cpu / sample.cpu);
      }
    }
    const ratio = (name, key) => (name === 'bare' ? 1 : Number(median(samples[name][key]).toFixed(2)));
    const rows = CASES.map(([label, name]) => ({
      case: label,
      'req/s': Math.round(median(samples[name].rps)),
      'ratio to bare express': ratio(name, 'rpsRatio'),
      'server CPU µs/req': Math.round(median(samples[name].cpu)),
      'CPU-bound ratio to bare express': ratio(name, 'cpuRatio'),
      'median latency ms': median(samples[name].p50),
    }));
    const failed = CASES.filter(([, name]) => samples[name].failures > 0).map(([label, name]) => `${label}: ${samples[name].failures} failed requests`);
    const login = await loginTimes(`http://127.0.0.1:${ports.login}`, 15);
    rows.push(
      ...[['unknown account', login.unknown], ['wrong password', login.wrong]].map(([what, ms]) => ({
        case: `POST /auth/login/unamepwd, ${what} (cost 11)`,
        'req/s': '–',
        'ratio to bare express': '–',
        'server CPU µs/req': '–',
        'CPU-bound ratio to bare express': '–',
        'median latency ms': Number(ms.toFixed(1)),
      })),
    );
    const spread = Math.abs(login.unknown / login.wrong - 1) * 100;
    return {
      columns: ['case', 'req/s', 'ratio to bare express', 'server CPU µs/req', 'CPU-bound ratio to bare express', 'median latency ms'],
      rows,
      notes: [
        `autocannon ${CONNECTIONS} connections, ${roundCount} rounds of ${ROUND_SECONDS} s per case, each case right after a bare-express run, in rotating order; req/s and CPU are medians over every run of the case (the bare row over all its runs), so they can disagree with the ratios, which are the median of each case's ratio to the bare run just before it; the steadier numbers. At most 5 rounds. Servers in one child process, load generator in another.`,
        'On 2 cores the load generator can saturate before a fast server does, which flattens req/s; "server CPU µs/req" (the server process\'s user+system CPU time over the requests it served) does not depend on that, and "CPU-bound ratio" = bare CPU/req ÷ case CPU/req is the throughput ratio a CPU-bound server would show.',
        'Every case answers GET /me with {id}; every shielded case verifies HS256, issuer and audience, and refuses a request without a token (checked before measuring).',
        'portcullis @JwtShield keeps the verified JWT per keep-alive connection (AuthContext memo): a repeated identical token skips the signature check until its exp; expiry and invalidation (upgrade, logout, family revocation) are checked on every request. connectionMemo: false verifies the signature on every request.',
        `Login timing: unknown account ${login.unknown.toFixed(1)} ms vs wrong password ${login.wrong.toFixed(1)} ms, ${spread.toFixed(1)}% apart (target: within 10%).`,
        'portcullis apps disable express\'s X-Powered-By header (bare express sends it); "portcullis app, same route unshielded" is the baseline without that difference, so portcullis @JwtShield ÷ it is what the shield alone costs.',
        redis
          ? 'portcullis @JwtShield, Redis store: the invalidation markers are read from a local redis-server (one MGET per request), as on a fleet. With session:jwt-near-cache-seconds 5 a JWT found valid is trusted for up to 5 s per process, dropped at once by revocation events.'
          : 'redis-server not found: the Redis row is missing from this run.',
        ...failed,
      ],
    };
  } finally {
    child.send('stop');
    await once(child, 'exit');
    await redis?.stop();
  }
}

if (process.argv.includes(SERVE_FLAG)) await serve();
