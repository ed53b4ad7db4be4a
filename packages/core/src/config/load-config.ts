import { CAPTCHA_VERIFY_URLS, type CaptchaProvider, type PortcullisConfig, type SecurityConfig, type ShieldFallback } from '../contracts/portcullis-config.js';
import { Secret } from '../contracts/secret.js';
import { ConfigError } from '../errors/portcullis-error.js';
import { overlayEnvironment, readConfigFile, type RawTree } from './config-source.js';

/**
 * Where {@link loadConfig} reads from; every field defaults to the process's own.
 *
 * @example
 * ```ts
 * const config = loadConfig({ env: { SVC__SECURITY__MODE: 'jwt' }, tree: {} } satisfies ConfigSources);
 * ```
 */
export interface ConfigSources {
  /** Environment variables; defaults to `process.env`. */
  env?: Readonly<Record<string, string | undefined>>;
  /** Directory searched for `svc.config.json`/`.yaml`; defaults to `process.cwd()`. */
  cwd?: string;
  /** A tree used instead of the config file, shaped like the file (`{ svc: { security: … } }`). */
  tree?: RawTree;
}

type Reader<T> = (value: unknown, key: string) => T;

/** Quotes a scalar; names only the kind of a list or section, which may hold a secret (a key given as a list). */
function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (Array.isArray(value)) return 'a list';
  return typeof value === 'object' && value !== null ? 'a section' : String(value);
}

const integer = (min: number, max: number): Reader<number> => (value, key) => {
  const n = typeof value === 'number' ? value : typeof value === 'string' && /^-?\d+$/.test(value.trim()) ? Number(value) : NaN;
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new ConfigError(key, `must be an integer from ${min} to ${max}, got ${describe(value)}`);
  }
  return n;
};

const decimal = (min: number, max: number): Reader<number> => (value, key) => {
  const n = typeof value === 'number' ? value : typeof value === 'string' && /^\s*\d+(\.\d+)?\s*$/.test(value) ? Number(value) : NaN;
  if (!Number.isFinite(n) || n < min || n > max) throw new ConfigError(key, `must be a number from ${min} to ${max}, got ${describe(value)}`);
  return n;
};

const boolean: Reader<boolean> = (value, key) => {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'string' && /^(true|false)$/i.test(value.trim())) return value.trim().toLowerCase() === 'true';
  throw new ConfigError(key, `must be true or false, got ${describe(value)}`);
};

const text: Reader<string> = (value, key) => {
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return String(value);
  throw new ConfigError(key, `must be a string, got ${describe(value)}`);
};

const oneOf = <T extends string>(...allowed: T[]): Reader<T> => (value, key) => {
  const v = typeof value === 'string' ? value.trim().toLowerCase() : value;
  if (typeof v === 'string' && (allowed as string[]).includes(v)) return v as T;
  throw new ConfigError(key, `must be one of ${allowed.map((a) => `"${a}"`).join(', ')}, got ${describe(value)}`);
};

/** Reads one section, refusing keys it does not know so that typos stop start-up. */
class Section {
  private readonly seen = new Set<string>();

  constructor(private readonly tree: RawTree, private readonly path: string) {}

  read<T>(name: string, reader: Reader<T>, fallback: T): T {
    this.seen.add(name);
    const value = this.tree[name];
    if (value === undefined || value === null || value === '') return fallback;
    return reader(value, `${this.path}:${name}`);
  }

  optional<T>(name: string, reader: Reader<T>): T | undefined {
    return this.read<T | undefined>(name, reader, undefined);
  }

  child(name: string): Section {
    this.seen.add(name);
    const value = this.tree[name];
    if (value !== undefined && (typeof value !== 'object' || value === null || Array.isArray(value))) {
      throw new ConfigError(`${this.path}:${name}`, 'must be a section (an object)');
    }
    return new Section((value as RawTree) ?? Object.create(null), `${this.path}:${name}`);
  }

  /** Throws on the first key that no reader asked for. */
  done(): void {
    const unknown = Object.keys(this.tree).find((k) => !this.seen.has(k));
    if (unknown !== undefined) throw new ConfigError(`${this.path}:${unknown}`, 'is not a known setting');
  }
}

function readPassword(s: Section): SecurityConfig['password'] {
  const section = s.child('password');
  const password = {
    workFactor: section.read('work-factor', integer(4, 31), 11),
    prehash: section.read('prehash', oneOf('none', 'sha384'), 'none'),
    minLength: section.read('min-length', integer(1, 4096), 8),
    maxLength: section.read('max-length', integer(1, 65_536), 1024),
    maxWaitSeconds: section.read('max-wait-seconds', integer(0, 3600), 30),
  };
  section.done();
  if (password.minLength > password.maxLength) {
    throw new ConfigError('svc:security:password:min-length', `must not exceed password:max-length (${password.maxLength})`);
  }
  return password;
}

function readLockout(s: Section): SecurityConfig['lockout'] {
  const section = s.child('lockout');
  const lockout = {
    store: section.read('store', oneOf('memory', 'backplane'), 'memory'),
    maxFailures: section.read('max-failures', integer(1, 1_000_000), 5),
    ipMaxFailures: section.read('ip-max-failures', integer(0, 1_000_000), 50),
    windowMinutes: section.read('window-minutes', integer(1, 525_600), 15),
    lockMinutes: section.read('lock-minutes', integer(1, 525_600), 15),
  };
  section.done();
  return lockout;
}

function readCaptcha(s: Section): SecurityConfig['captcha'] {
  const section = s.child('captcha');
  const provider = section.optional('provider', oneOf<CaptchaProvider>('recaptcha', 'hcaptcha', 'turnstile'));
  const captcha = {
    provider,
    siteKey: section.read('site-key', text, ''),
    secretKey: new Secret(section.read('secret-key', text, '')),
    verifyUrl: section.read('verify-url', text, provider ? CAPTCHA_VERIFY_URLS[provider] : ''),
    expectedHostname: section.read('expected-hostname', text, '').trim().toLowerCase(),
    expectedAction: section.read('expected-action', text, '').trim(),
    minScore: section.optional('min-score', decimal(0, 1)),
  };
  section.done();
  if (!captcha.secretKey.isEmpty && !provider) {
    throw new ConfigError('svc:security:captcha:provider', 'must be one of "recaptcha", "hcaptcha", "turnstile" when captcha:secret-key is set');
  }
  return captcha;
}

function readSession(s: Section): SecurityConfig['session'] {
  const section = s.child('session');
  const session = {
    accessMinutes: section.read('access-minutes', integer(1, 525_600), 60),
    refreshDays: section.read('refresh-days', integer(1, 3650), 7),
    maxPerPrincipal: section.read('max-per-principal', integer(1, 100_000), 32),
    nearCacheSeconds: section.read('near-cache-seconds', integer(0, 3600), 5),
    jwtNearCacheSeconds: section.read('jwt-near-cache-seconds', integer(0, 60), 0),
  };
  section.done();
  return session;
}

function readShields(s: Section): SecurityConfig['shields'] {
  const section = s.child('shields');
  const shields = { fallback: section.read('fallback', oneOf<ShieldFallback>('none', 'jwt', 'session', 'any'), 'none') };
  section.done();
  return shields;
}

const algorithm: Reader<'HS256' | 'EdDSA'> = (value, key) => (oneOf('hs256', 'eddsa')(value, key) === 'eddsa' ? 'EdDSA' : 'HS256');

/** A JSON/YAML list, or comma-separated text (the environment's spelling); empty entries are dropped. */
const list: Reader<string[]> = (value, key) => {
  const items = Array.isArray(value) ? value : typeof value === 'string' ? value.split(',') : undefined;
  if (!items || items.some((item) => typeof item !== 'string')) throw new ConfigError(key, `must be a list of strings or comma-separated text, got ${describe(value)}`);
  return (items as string[]).map((item) => item.trim()).filter((item) => item.length > 0);
};

/** PEM text; a literal `\n` (how one-line environment values carry newlines) stands for a newline. */
const pem: Reader<string> = (value, key) => text(value, key).replace(/\\n/g, '\n').trim();

function readJwt(s: Section): SecurityConfig['jwt'] {
  const section = s.child('jwt');
  const jwt = {
    algorithm: section.read('algorithm', algorithm, 'HS256'),
    verifyOnly: section.read('verify-only', boolean, false),
    mapInboundClaims: section.read('map-inbound-claims', boolean, true),
    nameClaim: section.read('name-claim', text, ''),
  };
  section.done();
  return jwt;
}

/** The keys of `svc:security`: the HMAC keys, or the Ed25519 keys of EdDSA mode. */
function readKeys(s: Section, jwt: SecurityConfig['jwt']) {
  const keyText = s.optional('key', text);
  const signingKey = s.optional('signing-key', pem);
  const keys = {
    key: keyText === undefined ? undefined : new Secret(keyText.trim()),
    previousKeys: s.read('previous-keys', list, []).map((k) => new Secret(k)),
    signingKey: signingKey === undefined ? undefined : new Secret(signingKey),
    previousPublicKeys: s.read('previous-public-keys', list, []).map((k) => pem(k, 'svc:security:previous-public-keys')),
    publicKey: s.optional('public-key', pem),
  };
  if (jwt.verifyOnly && jwt.algorithm !== 'EdDSA') throw new ConfigError('svc:security:jwt:verify-only', 'requires jwt:algorithm EdDSA (an HMAC key can always mint tokens)');
  if (jwt.verifyOnly && keys.signingKey !== undefined) throw new ConfigError('svc:security:signing-key', 'must not be set on a verify-only server (jwt:verify-only is true)');
  if (jwt.verifyOnly && keys.publicKey === undefined) throw new ConfigError('svc:security:public-key', 'is required when jwt:verify-only is true');
  return keys;
}

function readSecurity(s: Section): SecurityConfig {
  const jwt = readJwt(s);
  const security: SecurityConfig = {
    mode: s.optional('mode', oneOf('jwt')),
    ...readKeys(s, jwt),
    // RFC 7518 §3.2: an HS256 key MUST be at least 256 bits, so the floor is not configurable.
    minKeyBytes: s.read('min-key-bytes', integer(32, 1024), 32),
    accessTokenMinutes: s.read('access-token-minutes', integer(1, 525_600), 15),
    refreshTokenDays: s.read('refresh-token-days', integer(1, 3650), 7),
    issuer: s.read('issuer', text, 'portcullis'),
    audience: s.read('audience', text, 'portcullis'),
    clockSkewSeconds: s.read('clock-skew-seconds', integer(0, 3600), 30),
    refreshReuseGraceSeconds: s.read('refresh-reuse-grace-seconds', integer(0, 300), 0),
    jwt,
    password: readPassword(s),
    lockout: readLockout(s),
    captcha: readCaptcha(s),
    session: readSession(s),
    shields: readShields(s),
  };
  s.done();
  return security;
}

/** `host:port`, the host a name, an IPv4 address or an IPv6 address in brackets. */
const NODE = /^(\[[0-9a-f:.]+\]|[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?):(\d{1,5})$/i;

/** `svc:persistence:cache:nodes`: comma-separated `host:port`; a bad entry is named (it holds no password). */
const nodeList: Reader<readonly { host: string; port: number }[]> = (value, key) => {
  if (typeof value !== 'string') throw new ConfigError(key, 'must be comma-separated host:port entries');
  const entries = value.split(',').map((entry) => entry.trim()).filter((entry) => entry !== '');
  return entries.map((entry) => {
    const match = NODE.exec(entry);
    const port = match ? Number(match[2]) : 0;
    if (!match || port < 1 || port > 65535) throw new ConfigError(key, `"${entry}" is not host:port with a port from 1 to 65535`);
    return { host: match[1]!.replace(/^\[|\]$/g, ''), port };
  });
};

/** The cache section: provider, URL and Redis topology. The URL is never quoted, as it may hold a password. */
function readCache(s: Section): PortcullisConfig['persistence']['cache'] {
  const provider = s.read('provider', oneOf('inmemory', 'redis'), 'inmemory');
  const url = s.read('url', text, 'redis://127.0.0.1:6379');
  const topology = s.read('topology', oneOf('single', 'cluster', 'sentinel'), 'single');
  const nodes = s.read('nodes', nodeList, []);
  const sentinelMaster = s.read('sentinel-master', text, 'mymaster').trim();
  s.done();
  if (topology === 'single' && nodes.length > 0) {
    throw new ConfigError('svc:persistence:cache:nodes', 'is only read with topology "cluster" or "sentinel"; with "single" the server is the one in url');
  }
  if (topology !== 'single' && nodes.length === 0) {
    throw new ConfigError('svc:persistence:cache:nodes', `must name at least one host:port with topology "${topology}" (${topology === 'cluster' ? 'cluster seed nodes' : 'the sentinels'})`);
  }
  if (sentinelMaster === '') throw new ConfigError('svc:persistence:cache:sentinel-master', 'must not be empty');
  return { provider, url, topology, nodes, sentinelMaster };
}

const POSTGRES_URL = /^postgres(?:ql)?:\/\/\S+$/i;

/** The accounts section; the URL is never quoted, as it usually holds a password. */
function readAccounts(s: Section): PortcullisConfig['persistence']['accounts'] {
  const provider = s.read('provider', oneOf('cache', 'postgres'), 'cache');
  const url = s.read('url', text, '').trim();
  s.done();
  if (provider === 'postgres' && !POSTGRES_URL.test(url)) {
    throw new ConfigError('svc:persistence:accounts:url', url === '' ? 'must be set when accounts:provider is "postgres"' : 'must be a postgres:// or postgresql:// URL');
  }
  if (provider === 'cache' && url !== '') {
    throw new ConfigError('svc:persistence:accounts:provider', 'must be "postgres" when accounts:url is set (accounts would otherwise stay in the cache)');
  }
  return { provider, url: new Secret(url) };
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !(value instanceof Secret) && !Object.isFrozen(value)) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}

/**
 * Reads configuration once from the config file and `SVC__…` environment
 * variables (which win), validates every setting and returns a frozen object.
 * An invalid value throws a {@link ConfigError} naming the key and what is allowed.
 * The environment is production when `NODE_ENV=production`.
 *
 * @example
 * ```ts
 * const config = loadConfig({ env: { SVC__SECURITY__MODE: 'jwt', SVC__SECURITY__PASSWORD__WORK_FACTOR: '12' } });
 * config.security.password.workFactor; // 12
 * ```
 */
export function loadConfig(sources: ConfigSources = {}): PortcullisConfig {
  const env = sources.env ?? process.env;
  const file = sources.tree ? { tree: sources.tree, source: 'the tree passed to loadConfig' } : readConfigFile(env, sources.cwd ?? process.cwd());
  const tree = overlayEnvironment(file.tree, env);
  const production = (env.NODE_ENV ?? '').trim().toLowerCase() === 'production';
  if (tree.svc !== undefined && (typeof tree.svc !== 'object' || tree.svc === null || Array.isArray(tree.svc))) {
    throw new ConfigError('svc', 'must be a section (an object)');
  }
  const svc = new Section(((tree.svc ?? Object.create(null)) as RawTree), 'svc');
  const hasSecuritySection = (tree.svc as RawTree | undefined)?.security !== undefined;
  const security = readSecurity(svc.child('security'));
  const persistence = svc.child('persistence');
  const cache = persistence.child('cache');
  const errors = svc.child('errors');
  const config: PortcullisConfig = {
    source: file.source,
    hasSecuritySection,
    production,
    security,
    persistence: {
      cache: readCache(cache),
      accounts: readAccounts(persistence.child('accounts')),
    },
    errors: { format: errors.optional('format', oneOf('simple')) },
  };
  persistence.done();
  errors.done();
  return deepFreeze(config);
}
