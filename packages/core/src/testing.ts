/**
 * @portcullis/core/testing — portcullis stacks for an application's tests: a
 * child tsyringe container wired by `registerPortcullis` with a test
 * configuration, on memory or on a Redis the test run already has, with helpers
 * that mint a JWT and a session for a subject. Never for production code.
 */
import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { container as rootContainer, type DependencyContainer } from 'tsyringe';
import { registerPortcullis, type PortcullisRegistration } from './composition/register-portcullis.js';
import { loadConfig } from './config/load-config.js';
import type { LoggerFactory } from './contracts/logger.js';
import type { PortcullisConfig } from './contracts/portcullis-config.js';
import { JwtTokenIssuer } from './jwt/jwt-token-issuer.js';
import { silentLoggerFactory } from './logging/logger.js';
import { ConnectionRegistry } from './realtime/connection-registry.js';
import { GateDispatcher, type PortalClass } from './realtime/gate-dispatcher.js';
import { TokenSessionSync } from './session/token-session-sync.js';
import type { SessionStoreOptions, SessionStores } from './store/session-stores.js';

export { storeUnavailable } from './store/cache-store.js';

/** 32 bytes of key, base64, the same for every stack: good enough for tests, never for production. */
const TEST_KEY = Buffer.alloc(32, 7).toString('base64');

type Tree = Record<string, unknown>;

/**
 * Options of {@link createMemoryTestStack} and {@link createRedisTestStack}; every
 * one is optional.
 *
 * @example
 * ```ts
 * const options: TestStackOptions = { portals: [GamePortal], security: { lockout: { 'max-failures': 3 } } };
 * ```
 */
export interface TestStackOptions {
  /** The signing key, base64 of at least 32 bytes. Default: one fixed test key, so stacks of one fleet agree. */
  readonly key?: string;
  /** More `svc:security` settings, spelled as in `svc.config.json`; merged into the test defaults (mode `jwt`, bcrypt work factor 4). */
  readonly security?: Readonly<Record<string, unknown>>;
  /** `SVC__…` variables laid over the configuration, as `loadConfig` reads them. The process environment is never read. */
  readonly env?: Readonly<Record<string, string>>;
  /** Redis key and channel prefix. Two Redis stacks with the same prefix are two servers of one fleet. Default: a fresh one. */
  readonly keyPrefix?: string;
  /** Test-only store settings: lifetimes in milliseconds, the Redis operation timeout and queue bound. */
  readonly stores?: Pick<SessionStoreOptions, 'operationTimeoutMs' | 'maxPendingOperations' | 'sessionLifetimesMs' | 'lockoutTimesMs'>;
  /** Portal classes registered on the stack's dispatcher. */
  readonly portals?: readonly PortalClass[];
  /** Where log lines go. Default: nowhere. */
  readonly loggers?: LoggerFactory;
  /** Wait until the store serves requests (default). `false` builds a stack on a Redis that is down. */
  readonly waitForStore?: boolean;
}

/**
 * One portcullis "server" for tests: the container `registerPortcullis` filled,
 * the services a test talks to, and token helpers. Call `close()` when done.
 *
 * @example
 * ```ts
 * const stack: TestStack = await createMemoryTestStack({ portals: [GamePortal] });
 * const reply = await stack.dispatcher.dispatch(
 *   { id: 1, portal: '/game', gate: 'move', data: { x: 1 } },
 *   { clientId: 'c1', transport: 'ws', remoteAddress: undefined, credential: await stack.session('player-1') },
 * );
 * await stack.close();
 * ```
 */
export interface TestStack {
  readonly container: DependencyContainer;
  readonly config: PortcullisConfig;
  readonly stores: SessionStores;
  readonly sessions: TokenSessionSync;
  /** The container's one dispatcher, with the `portals` of the options registered; it never sheds load unless told to (`shedWhenBehind(ms)`). */
  readonly dispatcher: GateDispatcher;
  /** The container's one connection registry: hand it to a transport. */
  readonly registry: ConnectionRegistry;
  readonly issuer: JwtTokenIssuer;
  readonly keyPrefix: string;
  /** A fresh JWT access token for `subject`, with optional custom claims. */
  jwt(subject: string, claims?: Record<string, unknown>): string;
  /** A fresh session access token for `subject`: a JWT with `claims`, upgraded. */
  session(subject: string, claims?: Record<string, unknown>): Promise<string>;
  /** Stops the registry listening, detaches the sessions and closes the stores (the account store's too). */
  close(): Promise<void>;
}

/**
 * A stack whose sessions, lockout counters and accounts live in this process's memory.
 *
 * @example
 * ```ts
 * const stack = await createMemoryTestStack();
 * expect(await stack.sessions.validate(await stack.session('player-1'))).toMatchObject({ id: 'player-1' });
 * await stack.close();
 * ```
 */
export function createMemoryTestStack(options: TestStackOptions = {}): Promise<TestStack> {
  return createTestStack({ provider: 'inmemory' }, {}, options);
}

/**
 * A stack on the Redis at `redisUrl`: sessions, revocation pub/sub, the lockout
 * backplane and accounts, under a key prefix of its own. It does not start a
 * Redis; the test run provides one.
 *
 * @throws TypeError when `redisUrl` is not a `redis://` or `rediss://` URL.
 * @example
 * ```ts
 * const serverA = await createRedisTestStack(redisUrl);
 * const serverB = await createRedisTestStack(redisUrl, { keyPrefix: serverA.keyPrefix });
 * await serverA.sessions.revokeAllFor('player-1'); // serverB's connections of player-1 close too
 * ```
 */
export function createRedisTestStack(redisUrl: string, options: TestStackOptions = {}): Promise<TestStack> {
  if (typeof redisUrl !== 'string' || !/^rediss?:\/\//.test(redisUrl)) {
    throw new TypeError('createRedisTestStack needs a redis:// or rediss:// URL');
  }
  return createTestStack({ provider: 'redis', url: redisUrl }, { lockout: { store: 'backplane' } }, options);
}

async function createTestStack(cache: Tree, security: Tree, options: TestStackOptions): Promise<TestStack> {
  const keyPrefix = options.keyPrefix ?? `test-${randomUUID()}`;
  const defaults: Tree = { mode: 'jwt', key: options.key ?? TEST_KEY, password: { 'work-factor': 4 }, ...security };
  const config = loadConfig({
    env: options.env ?? {},
    tree: { svc: { security: merge(defaults, options.security ?? {}), persistence: { cache } } },
  });
  const container = rootContainer.createChildContainer();
  const registration = registerPortcullis(container, { config, loggers: options.loggers ?? silentLoggerFactory, stores: { ...options.stores, keyPrefix } });
  if (!registration.stores) throw new TypeError('a test stack needs svc:security:mode jwt');
  try {
    if (options.waitForStore ?? true) await registration.ready();
    return assemble(container, registration, keyPrefix, options.portals ?? []);
  } catch (error) {
    await registration.close();
    throw error;
  }
}

function assemble(container: DependencyContainer, registration: PortcullisRegistration, keyPrefix: string, portals: readonly PortalClass[]): TestStack {
  const { config } = registration;
  const stores = registration.stores!;
  const sessions = container.resolve(TokenSessionSync);
  const issuer = container.resolve(JwtTokenIssuer);
  // A test's own busy loops (a fuzz batch, a loaded CI machine) must not turn requests into
  // `overloaded`: test stacks never shed unless a test asks with dispatcher.shedWhenBehind(ms).
  const dispatcher = container.resolve(GateDispatcher).register(...portals).shedWhenBehind(false);
  const registry = container.resolve(ConnectionRegistry);
  const jwt = (subject: string, claims?: Record<string, unknown>) => issuer.issueLoginPair(subject, claims).accessToken;
  return {
    container,
    config,
    stores,
    sessions,
    dispatcher,
    registry,
    issuer,
    keyPrefix,
    jwt,
    session: async (subject, claims) => (await sessions.upgrade(jwt(subject, claims))).accessToken,
    async close() {
      registry.dispose();
      await sessions.close();
      await registration.close();
    },
  };
}

/** `over` laid on `base`, section by section. */
function merge(base: Readonly<Tree>, over: Readonly<Tree>): Tree {
  const out: Tree = { ...base };
  for (const [name, value] of Object.entries(over)) {
    const current = out[name];
    out[name] = isSection(current) && isSection(value) ? merge(current, value) : value;
  }
  return out;
}

function isSection(value: unknown): value is Tree {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
