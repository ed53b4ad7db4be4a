/**
 * docs/openapi.json against the running example server: every route the server
 * mounts under /auth is documented and every documented route is mounted; for every
 * documented route and status a real request produces that status, and its body and
 * headers match what the document says.
 */
import 'reflect-metadata';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ACCOUNT_STORE, loadConfig, LoginService, OverloadedError, SessionStores, silentLoggerFactory, TokenSessionSync } from '@portcullis/core';
import { storeUnavailable } from '@portcullis/core/testing';
import type { DependencyContainer } from 'tsyringe';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createGameServer, type GameServer } from '../../examples/game-server/src/game-server.js';
import { resolvePointer, validate, type Schema } from './support/json-schema.js';

type Document = {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
};
type Operation = {
  requestBody?: { content: Record<string, { schema: Schema }> };
  responses: Record<string, ResponseObject | { $ref: string }>;
};
type ResponseObject = {
  description: string;
  headers?: Record<string, { required?: boolean; schema: Schema }>;
  content?: Record<string, { schema: Schema }>;
};

const openapi: Document = JSON.parse(readFileSync(new URL('../../docs/openapi.json', import.meta.url), 'utf8'));
const SOLVED = 'solved-captcha';

interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
}

interface Call {
  /** `POST` unless given. */
  readonly method?: 'GET' | 'POST' | 'DELETE';
  /** A JSON body; `raw` sends text as is instead. */
  readonly body?: unknown;
  readonly raw?: string;
  readonly contentType?: string;
  readonly bearer?: string;
  /** The body is meant to be valid: it must match the documented request schema. */
  readonly validRequest?: boolean;
  /** The documented path when `path` fills in a template (`/auth/sessions/{id}`). */
  readonly template?: string;
}

const documented = new Set<string>();
const methodsOf = (item: Record<string, Operation>) => Object.entries(item).filter(([key]) => key !== 'parameters');
for (const [path, item] of Object.entries(openapi.paths)) {
  for (const [method, operation] of methodsOf(item)) {
    for (const status of Object.keys(operation.responses)) documented.add(`${method.toUpperCase()} ${path} ${status}`);
  }
}
const seen = new Set<string>();

function operation(method: string, path: string): Operation {
  const op = openapi.paths[path]?.[method.toLowerCase()];
  if (op === undefined) throw new Error(`${method} ${path} is not in docs/openapi.json`);
  return op;
}

function responseFor(op: Operation, status: number): ResponseObject | undefined {
  const response = op.responses[String(status)];
  if (response === undefined) return undefined;
  return '$ref' in response ? (resolvePointer(openapi, response.$ref) as ResponseObject) : response;
}

/** Sends one request to `base` and checks the answer against the document. */
async function send(base: string, path: string, call: Call, expected: { status: number; emptyBody?: boolean }): Promise<Answer> {
  const method = call.method ?? 'POST';
  const documentedPath = call.template ?? path;
  const op = operation(method, documentedPath);
  if (call.validRequest) {
    const schema = op.requestBody?.content['application/json']?.schema;
    expect(schema, `request schema of ${method} ${path}`).toBeDefined();
    expect(validate(openapi, schema!, call.body), `request body of ${method} ${path}`).toEqual([]);
  }
  const headers: Record<string, string> = {};
  if (call.body !== undefined || call.raw !== undefined) headers['content-type'] = call.contentType ?? 'application/json';
  if (call.bearer !== undefined) headers.authorization = `Bearer ${call.bearer}`;
  const response = await fetch(`${base}${path}`, { method, headers, body: call.raw ?? (call.body === undefined ? undefined : JSON.stringify(call.body)) });
  const answer: Answer = { status: response.status, headers: response.headers, text: await response.text() };
  const where = `${method} ${path} → ${answer.status} ${answer.text.slice(0, 200)}`;
  expect(answer.status, where).toBe(expected.status);
  seen.add(`${method} ${documentedPath} ${answer.status}`);

  const documentedResponse = responseFor(op, answer.status);
  expect(documentedResponse, `${where}: status not documented`).toBeDefined();
  for (const [name, header] of Object.entries(documentedResponse!.headers ?? {})) {
    const value = answer.headers.get(name);
    if (header.required) expect(value, `${where}: header ${name}`).not.toBeNull();
    if (value !== null) expect(validate(openapi, header.schema, value), `${where}: header ${name}`).toEqual([]);
  }
  const schema = documentedResponse!.content?.['application/json']?.schema;
  if (expected.emptyBody || schema === undefined) {
    expect(answer.text, `${where}: body`).toBe('');
  } else {
    expect(answer.headers.get('content-type'), where).toMatch(/^application\/json\b/);
    expect(validate(openapi, schema, JSON.parse(answer.text)), where).toEqual([]);
  }
  return answer;
}

const json = <T>(answer: Answer): T => JSON.parse(answer.text) as T;

/** Every store the example uses rejects as an unreachable Redis does, until the returned function is called. */
function storeOutage(container: DependencyContainer): () => void {
  const stores = container.resolve(SessionStores);
  const accounts = container.resolve(ACCOUNT_STORE) as unknown as Record<string, unknown>;
  const spies: { mockRestore(): void }[] = [];
  const cacheMethods = ['get', 'getMany', 'set', 'delete', 'setIfAbsent', 'take', 'write', 'takeMembers', 'increment', 'remainingMs'] as const;
  for (const store of new Set([stores.cache, stores.lockout])) {
    for (const method of cacheMethods) spies.push(vi.spyOn(store, method).mockRejectedValue(storeUnavailable()));
  }
  for (const method of ['create', 'findByUsername', 'findByEmail', 'findById']) {
    spies.push(vi.spyOn(accounts as Record<string, (...args: unknown[]) => unknown>, method).mockRejectedValue(storeUnavailable()));
  }
  return () => spies.forEach((spy) => spy.mockRestore());
}

async function duringOutage<T>(container: DependencyContainer, run: () => Promise<T>): Promise<T> {
  const restore = storeOutage(container);
  try {
    return await run();
  } finally {
    restore();
  }
}

const tooLarge = (fields: Record<string, string>) => JSON.stringify({ ...fields, padding: 'x'.repeat(20 * 1024) });
const latin1 = 'application/json; charset=latin1';

let plain: GameServer;
let captcha: GameServer;
let captchaProvider: Server;
let base: string;
let captchaBase: string;
let serial = 0;

/** A new account on `url`; answers its credentials and login tokens. */
async function newPlayer(url = base, extra: Record<string, string> = {}) {
  const username = `player${++serial}`;
  const credentials = { email: `${username}@example.com`, username, password: 'correct horse battery' };
  const answer = await send(url, '/auth/signup', { body: { ...credentials, ...extra }, validRequest: true }, { status: 201 });
  return { ...credentials, ...json<{ accessToken: string; refreshToken: string }>(answer) };
}

async function upgrade(accessToken: string) {
  const answer = await send(base, '/auth/upgrade', { bearer: accessToken, body: { token: accessToken }, validRequest: true }, { status: 200 });
  return json<{ accessToken: string; refreshToken: string }>(answer);
}

beforeAll(async () => {
  const key = randomBytes(32).toString('base64');
  plain = await createGameServer({
    config: loadConfig({ env: {}, tree: { svc: { security: { mode: 'jwt', key, password: { 'work-factor': 4 } } } } }),
    port: 0,
    loggers: silentLoggerFactory,
  });
  base = (await plain.listen()).http;

  captchaProvider = createServer((req, res) => {
    let form = '';
    req.on('data', (chunk: Buffer) => (form += chunk.toString('utf8')));
    req.on('end', () => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ success: new URLSearchParams(form).get('response') === SOLVED }));
    });
  });
  await new Promise<void>((resolve) => captchaProvider.listen(0, '127.0.0.1', resolve));
  const verifyUrl = `http://127.0.0.1:${(captchaProvider.address() as AddressInfo).port}/siteverify`;
  captcha = await createGameServer({
    config: loadConfig({
      env: {},
      tree: {
        svc: {
          security: { mode: 'jwt', key, password: { 'work-factor': 4 }, captcha: { provider: 'turnstile', 'secret-key': 'test-secret', 'verify-url': verifyUrl } },
          errors: { format: 'simple' },
        },
      },
    }),
    port: 0,
    loggers: silentLoggerFactory,
  });
  captchaBase = (await captcha.listen()).http;
});

afterEach(() => {
  vi.restoreAllMocks();
});

afterAll(async () => {
  await plain?.close();
  await captcha?.close();
  await new Promise((resolve) => captchaProvider?.close(resolve));
});

describe('docs/openapi.json', () => {
  it('is OpenAPI 3.1 and every $ref in it resolves', () => {
    expect(openapi.openapi).toBe('3.1.0');
    const refs: string[] = [];
    const walk = (node: unknown): void => {
      if (Array.isArray(node)) node.forEach(walk);
      else if (typeof node === 'object' && node !== null) {
        for (const [key, value] of Object.entries(node)) {
          if (key === '$ref' && typeof value === 'string') refs.push(value);
          else walk(value);
        }
      }
    };
    walk(openapi);
    expect(refs.length).toBeGreaterThan(10);
    for (const ref of refs) expect(() => resolvePointer(openapi, ref), ref).not.toThrow();
  });

  it('documents exactly the routes the example server mounts under /auth', () => {
    const stack = (plain.app as unknown as { router: { stack: { route?: { path: string; methods: Record<string, boolean> } }[] } }).router.stack;
    const mounted = stack
      .flatMap((layer) => (layer.route ? Object.keys(layer.route.methods).map((m) => `${m.toUpperCase()} ${layer.route!.path}`) : []))
      .filter((route) => route.split(' ')[1]!.startsWith('/auth'));
    const inDocument = Object.entries(openapi.paths).flatMap(([path, item]) => methodsOf(item).map(([m]) => `${m.toUpperCase()} ${path.replace(/\{(\w+)\}/g, ':$1')}`));
    expect(mounted.length).toBe(10);
    expect([...inDocument].sort()).toEqual([...new Set(mounted)].sort());
  });
});

describe('POST /auth/signup', () => {
  it('201, 400, 409, 413, 415 as documented', async () => {
    const ada = await newPlayer();
    await send(base, '/auth/signup', { body: { email: 'not an email', username: 'x', password: 'short' } }, { status: 400 });
    await send(base, '/auth/signup', { body: { email: 'other@example.com', username: ada.username, password: ada.password }, validRequest: true }, { status: 409 });
    await send(base, '/auth/signup', { raw: tooLarge({ email: 'big@example.com', username: 'big', password: ada.password }) }, { status: 413 });
    await send(base, '/auth/signup', { raw: '{}', contentType: latin1 }, { status: 415 });
  });

  it('429 locked_out with Retry-After once the address made lockout:ip-max-failures refused signups', async () => {
    const strict = await createGameServer({
      config: loadConfig({ env: {}, tree: { svc: { security: { mode: 'jwt', key: randomBytes(32).toString('base64'), password: { 'work-factor': 4 }, lockout: { 'ip-max-failures': 1 } } } } }),
      port: 0,
      loggers: silentLoggerFactory,
    });
    try {
      const strictBase = (await strict.listen()).http;
      const taken = await newPlayer(strictBase);
      const probe = { email: 'probe@example.com', username: taken.username, password: taken.password };
      await send(strictBase, '/auth/signup', { body: probe, validRequest: true }, { status: 409 });
      const limited = await send(strictBase, '/auth/signup', { body: probe, validRequest: true }, { status: 429 });
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    } finally {
      await strict.close();
    }
  });

  it('400 captcha_failed when captcha is on and not solved; 201 when solved', async () => {
    const credentials = { email: 'captcha@example.com', username: 'captcha', password: 'correct horse battery' };
    const refused = await send(captchaBase, '/auth/signup', { body: { ...credentials, captchaToken: 'wrong' }, validRequest: true }, { status: 400 });
    expect(json<{ error: string }>(refused).error).toBe('captcha_failed');
    await newPlayer(captchaBase, { captchaToken: SOLVED });
  });

  it('500 and 503', async () => {
    vi.spyOn(plain.container.resolve(LoginService), 'signup').mockRejectedValueOnce(new Error('a bug'));
    const broken = await send(base, '/auth/signup', { body: { email: 'bug@example.com', username: 'bug', password: 'correct horse battery' }, validRequest: true }, { status: 500 });
    expect(broken.text).not.toContain('a bug');
    await duringOutage(plain.container, () =>
      send(base, '/auth/signup', { body: { email: 'down@example.com', username: 'down', password: 'correct horse battery' }, validRequest: true }, { status: 503 }),
    );
    vi.spyOn(plain.container.resolve(LoginService), 'signup').mockRejectedValueOnce(new OverloadedError('signups', 2));
    const overloaded = await send(base, '/auth/signup', { body: { email: 'busy@example.com', username: 'busy', password: 'correct horse battery' }, validRequest: true }, { status: 503 });
    expect(json<{ error: string }>(overloaded).error).toBe('overloaded');
    expect(overloaded.headers.get('retry-after')).toBe('2');
  });
});

describe.each([
  { path: '/auth/login/emailpwd', field: 'email', method: 'loginWithEmail' as const },
  { path: '/auth/login/unamepwd', field: 'username', method: 'loginWithUsername' as const },
])('POST $path', ({ path, field, method }) => {
  it('200, 400, 401, 413, 415 as documented', async () => {
    const player = await newPlayer();
    const name = player[field as 'email' | 'username'];
    await send(base, path, { body: { [field]: name, password: player.password }, validRequest: true }, { status: 200 });
    await send(base, path, { body: { password: player.password } }, { status: 400 });
    const wrong = await send(base, path, { body: { [field]: name, password: 'not the password' }, validRequest: true }, { status: 401 });
    expect(json<{ error: string }>(wrong).error).toBe('invalid_credentials');
    await send(base, path, { raw: tooLarge({ [field]: name, password: player.password }) }, { status: 413 });
    await send(base, path, { raw: '{}', contentType: latin1 }, { status: 415 });
  });

  it('429 locked_out with Retry-After after lockout:max-failures failures', async () => {
    const name = field === 'email' ? `locked${serial}@example.com` : `locked${serial}`;
    for (let failure = 1; failure <= plain.config.security.lockout.maxFailures; failure++) {
      await send(base, path, { body: { [field]: name, password: 'not the password' }, validRequest: true }, { status: 401 });
    }
    const locked = await send(base, path, { body: { [field]: name, password: 'not the password' }, validRequest: true }, { status: 429 });
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('400 captcha_failed when captcha is on and not solved', async () => {
    const player = await newPlayer(captchaBase, { captchaToken: SOLVED });
    const name = player[field as 'email' | 'username'];
    await send(captchaBase, path, { body: { [field]: name, password: player.password, captchaToken: SOLVED }, validRequest: true }, { status: 200 });
    const refused = await send(captchaBase, path, { body: { [field]: name, password: player.password, captchaToken: 'wrong' }, validRequest: true }, { status: 400 });
    expect(json<{ error: string }>(refused).error).toBe('captcha_failed');
  });

  it('500 and 503', async () => {
    const player = await newPlayer();
    const body = { [field]: player[field as 'email' | 'username'], password: player.password };
    vi.spyOn(plain.container.resolve(LoginService), method).mockRejectedValueOnce(new Error('a bug'));
    await send(base, path, { body, validRequest: true }, { status: 500 });
    await duringOutage(plain.container, () => send(base, path, { body, validRequest: true }, { status: 503 }));
    vi.spyOn(plain.container.resolve(LoginService), method).mockRejectedValueOnce(new OverloadedError('logins', 3));
    const overloaded = await send(base, path, { body, validRequest: true }, { status: 503 });
    expect(json<{ error: string }>(overloaded).error).toBe('overloaded');
    expect(overloaded.headers.get('retry-after')).toBe('3');
  });
});

describe('POST /auth/refresh', () => {
  it('200 with a login response for a JWT refresh token, and an upgrade response for a session refresh token', async () => {
    const player = await newPlayer();
    const rotated = json<{ accessToken: string; refreshToken: string }>(
      await send(base, '/auth/refresh', { body: { refreshToken: player.refreshToken }, validRequest: true }, { status: 200 }),
    );
    expect(rotated).not.toHaveProperty('accessExpiration');
    const session = await upgrade(rotated.accessToken);
    const renewed = await send(base, '/auth/refresh', { body: { refreshToken: session.refreshToken }, validRequest: true }, { status: 200 });
    expect(json<Record<string, string>>(renewed).accessToken).toMatch(/;session$/);
  });

  it('400, 401, 413, 415, 500 and 503 as documented', async () => {
    const player = await newPlayer();
    await send(base, '/auth/refresh', { body: {} }, { status: 400 });
    await send(base, '/auth/refresh', { body: { refreshToken: player.accessToken } }, { status: 401 });
    await send(base, '/auth/refresh', { raw: tooLarge({ refreshToken: player.refreshToken }) }, { status: 413 });
    await send(base, '/auth/refresh', { raw: '{}', contentType: latin1 }, { status: 415 });
    vi.spyOn(plain.container.resolve(TokenSessionSync), 'refresh').mockRejectedValueOnce(new Error('a bug'));
    await send(base, '/auth/refresh', { body: { refreshToken: player.refreshToken }, validRequest: true }, { status: 500 });
    const fresh = await newPlayer();
    await duringOutage(plain.container, () => send(base, '/auth/refresh', { body: { refreshToken: fresh.refreshToken }, validRequest: true }, { status: 503 }));
  });
});

describe('POST /auth/upgrade', () => {
  it('200, 400, 401, 413, 415, 500 and 503 as documented', async () => {
    const player = await newPlayer();
    await send(base, '/auth/upgrade', { bearer: player.accessToken, body: {} }, { status: 400 });
    const other = await newPlayer();
    await send(base, '/auth/upgrade', { bearer: player.accessToken, body: { token: other.accessToken }, validRequest: true }, { status: 401 });
    await send(base, '/auth/upgrade', { bearer: player.accessToken, raw: tooLarge({ token: player.accessToken }) }, { status: 413 });
    await send(base, '/auth/upgrade', { bearer: player.accessToken, raw: '{}', contentType: latin1 }, { status: 415 });
    vi.spyOn(plain.container.resolve(TokenSessionSync), 'upgrade').mockRejectedValueOnce(new Error('a bug'));
    await send(base, '/auth/upgrade', { bearer: player.accessToken, body: { token: player.accessToken }, validRequest: true }, { status: 500 });
    await duringOutage(plain.container, () =>
      send(base, '/auth/upgrade', { bearer: player.accessToken, body: { token: player.accessToken }, validRequest: true }, { status: 503 }),
    );
    await upgrade(player.accessToken);
    await send(base, '/auth/upgrade', { bearer: player.accessToken, body: { token: player.accessToken }, validRequest: true }, { status: 401 });
  });
});

describe('POST /auth/logout', () => {
  it('204 with a JWT and with a session token; the credential is refused afterwards', async () => {
    const player = await newPlayer();
    const second = await newPlayer();
    const session = await upgrade(second.accessToken);
    await send(base, '/auth/logout', { bearer: player.accessToken }, { status: 204 });
    await send(base, '/auth/logout', { bearer: session.accessToken }, { status: 204 });
    await send(base, '/auth/logout', { bearer: session.accessToken }, { status: 401, emptyBody: true });
  });

  it('401 is an empty challenge by default and {error, message} with svc:errors:format = simple', async () => {
    const challenge = await send(base, '/auth/logout', {}, { status: 401, emptyBody: true });
    expect(challenge.headers.get('www-authenticate')).toBe('Bearer');
    const simple = await send(captchaBase, '/auth/logout', { bearer: 'not-a-token' }, { status: 401 });
    expect(json<{ error: string }>(simple).error).toBe('unauthorized');
  });

  it('413, 415, 500 and 503 as documented', async () => {
    const player = await newPlayer();
    await send(base, '/auth/logout', { bearer: player.accessToken, raw: tooLarge({}) }, { status: 413 });
    await send(base, '/auth/logout', { bearer: player.accessToken, raw: '{}', contentType: latin1 }, { status: 415 });
    vi.spyOn(plain.container.resolve(TokenSessionSync), 'revoke').mockRejectedValueOnce(new Error('a bug'));
    await send(base, '/auth/logout', { bearer: player.accessToken }, { status: 500 });
    await duringOutage(plain.container, () => send(base, '/auth/logout', { bearer: player.accessToken }, { status: 503 }));
  });
});

describe('GET and DELETE /auth/sessions', () => {
  it('200 lists the logins; 204 ends one or every other; 404 for an id that is not the caller\'s; 401 without a credential', async () => {
    const player = await newPlayer();
    const list = await send(base, '/auth/sessions', { method: 'GET', bearer: player.accessToken }, { status: 200 });
    const [own] = json<{ sessions: Array<{ id: string; current: boolean }> }>(list).sessions;
    expect(own).toMatchObject({ current: true });
    const other = await newPlayer();
    await send(base, `/auth/sessions/${own!.id}`, { method: 'DELETE', template: '/auth/sessions/{id}', bearer: other.accessToken }, { status: 404 });
    await send(base, '/auth/sessions', { method: 'DELETE', bearer: player.accessToken }, { status: 204, emptyBody: true });
    await send(base, `/auth/sessions/${own!.id}`, { method: 'DELETE', template: '/auth/sessions/{id}', bearer: player.accessToken }, { status: 204, emptyBody: true });
    await send(base, '/auth/sessions', { method: 'GET' }, { status: 401, emptyBody: true });
    await send(base, '/auth/sessions', { method: 'DELETE' }, { status: 401, emptyBody: true });
    await send(base, `/auth/sessions/${own!.id}`, { method: 'DELETE', template: '/auth/sessions/{id}', bearer: player.accessToken }, { status: 401, emptyBody: true });
  });

  it('503 unavailable, with Retry-After, while the store is down', async () => {
    const player = await newPlayer();
    const [own] = json<{ sessions: Array<{ id: string }> }>(await send(base, '/auth/sessions', { method: 'GET', bearer: player.accessToken }, { status: 200 })).sessions;
    await duringOutage(plain.container, async () => {
      await send(base, '/auth/sessions', { method: 'GET', bearer: player.accessToken }, { status: 503 });
      await send(base, '/auth/sessions', { method: 'DELETE', bearer: player.accessToken }, { status: 503 });
      await send(base, `/auth/sessions/${own!.id}`, { method: 'DELETE', template: '/auth/sessions/{id}', bearer: player.accessToken }, { status: 503 });
    });
  });
});

describe('GET /auth/jwks.json', () => {
  it('404 not_found in HS256 mode', async () => {
    await send(base, '/auth/jwks.json', { method: 'GET' }, { status: 404 });
  });

  it('200 with the JWK Set in EdDSA mode', async () => {
    const signingKey = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const eddsa = await createGameServer({
      config: loadConfig({ env: {}, tree: { svc: { security: { mode: 'jwt', jwt: { algorithm: 'EdDSA' }, 'signing-key': signingKey, password: { 'work-factor': 4 } } } } }),
      port: 0,
      loggers: silentLoggerFactory,
    });
    try {
      const answer = await send((await eddsa.listen()).http, '/auth/jwks.json', { method: 'GET' }, { status: 200 });
      expect(json<{ keys: unknown[] }>(answer).keys).toHaveLength(1);
    } finally {
      await eddsa.close();
    }
  });
});

describe('coverage', () => {
  it('every documented route and status was produced by a real request above', () => {
    expect([...seen].sort()).toEqual([...documented].sort());
  });
});
