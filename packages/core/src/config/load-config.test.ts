import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CAPTCHA_VERIFY_URLS } from '../contracts/portcullis-config.js';
import { Secret } from '../contracts/secret.js';
import { ConfigError } from '../errors/portcullis-error.js';
import { loadConfig } from './load-config.js';

const KEY = 'q5Yk0Rg1y3pLJ2cWnVh8e7tXo4aZs6uBmDfGiHjKlMw=';

function configError(run: () => unknown): ConfigError {
  try {
    run();
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return e as ConfigError;
  }
  throw new Error('expected a ConfigError');
}

const fromEnv = (env: Record<string, string>) => loadConfig({ env, tree: {} });

describe('loadConfig: defaults', () => {
  it('gives every documented setting its default', () => {
    const config = fromEnv({});
    expect(config).toEqual({
      source: 'the tree passed to loadConfig',
      hasSecuritySection: false,
      production: false,
      security: {
        mode: undefined,
        key: undefined,
        previousKeys: [],
        signingKey: undefined,
        previousPublicKeys: [],
        publicKey: undefined,
        minKeyBytes: 32,
        accessTokenMinutes: 15,
        refreshTokenDays: 7,
        issuer: 'portcullis',
        audience: 'portcullis',
        clockSkewSeconds: 30,
        refreshReuseGraceSeconds: 0,
        jwt: { algorithm: 'HS256', verifyOnly: false, mapInboundClaims: true, nameClaim: '' },
        password: { workFactor: 11, prehash: 'none', minLength: 8, maxLength: 1024, maxWaitSeconds: 30 },
        lockout: { store: 'memory', maxFailures: 5, ipMaxFailures: 50, windowMinutes: 15, lockMinutes: 15 },
        captcha: { provider: undefined, siteKey: '', secretKey: expect.any(Secret), verifyUrl: '', expectedHostname: '', expectedAction: '', minScore: undefined },
        session: { accessMinutes: 60, refreshDays: 7, maxPerPrincipal: 32, nearCacheSeconds: 5, jwtNearCacheSeconds: 0 },
        shields: { fallback: 'none' },
      },
      persistence: { cache: { provider: 'inmemory', url: 'redis://127.0.0.1:6379', topology: 'single', nodes: [], sentinelMaster: 'mymaster' }, accounts: { provider: 'cache', url: expect.any(Secret) } },
      errors: { format: undefined },
    });
    expect(config.security.captcha.secretKey.isEmpty).toBe(true);
    expect(config.persistence.accounts.url.isEmpty).toBe(true);
  });

  it.each(Object.entries(CAPTCHA_VERIFY_URLS))('defaults captcha:verify-url to the %s endpoint, and lets it be overridden', (provider, url) => {
    expect(fromEnv({ SVC__SECURITY__CAPTCHA__PROVIDER: provider }).security.captcha.verifyUrl).toBe(url);
    const custom = fromEnv({ SVC__SECURITY__CAPTCHA__PROVIDER: provider, SVC__SECURITY__CAPTCHA__VERIFY_URL: 'http://127.0.0.1:9/verify' });
    expect(custom.security.captcha.verifyUrl).toBe('http://127.0.0.1:9/verify');
  });

  it('reads shields:fallback from the environment and refuses anything but none, jwt, session or any', () => {
    expect(fromEnv({ SVC__SECURITY__SHIELDS__FALLBACK: 'Session' }).security.shields.fallback).toBe('session');
    expect(fromEnv({ SVC__SECURITY__SHIELDS__FALLBACK: 'any' }).security.shields.fallback).toBe('any');
    expect(() => fromEnv({ SVC__SECURITY__SHIELDS__FALLBACK: 'deny' })).toThrow(/svc:security:shields:fallback: must be one of "none", "jwt", "session", "any"/);
  });

  it('is production only when NODE_ENV is production', () => {
    expect(fromEnv({ NODE_ENV: 'production' }).production).toBe(true);
    expect(fromEnv({ NODE_ENV: 'Production ' }).production).toBe(true);
    expect(fromEnv({ NODE_ENV: 'development' }).production).toBe(false);
    expect(fromEnv({ NODE_ENV: 'prod' }).production).toBe(false);
  });
});

describe('loadConfig: files', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'portcullis-config-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const write = (name: string, text: string) => writeFileSync(join(dir, name), text);

  it('reads svc.config.json from the working directory', () => {
    write('svc.config.json', JSON.stringify({ svc: { security: { mode: 'jwt', key: KEY, 'access-token-minutes': 30, jwt: { 'name-claim': 'name' } } } }));
    const config = loadConfig({ env: {}, cwd: dir });
    expect(config.hasSecuritySection).toBe(true);
    expect(config.security.mode).toBe('jwt');
    expect(config.security.key?.reveal()).toBe(KEY);
    expect(config.security.accessTokenMinutes).toBe(30);
    expect(config.security.jwt.nameClaim).toBe('name');
    expect(config.source).toBe(join(dir, 'svc.config.json'));
  });

  it.each(['svc.config.yaml', 'svc.config.yml'])('reads %s from the working directory', (name) => {
    write(name, ['svc:', '  security:', '    password:', '      work-factor: 12', '      prehash: sha384', '  persistence:', '    cache:', '      provider: redis', ''].join('\n'));
    const config = loadConfig({ env: {}, cwd: dir });
    expect(config.security.password).toMatchObject({ workFactor: 12, prehash: 'sha384' });
    expect(config.persistence.cache.provider).toBe('redis');
  });

  it('prefers svc.config.json when both a JSON and a YAML file exist', () => {
    write('svc.config.json', JSON.stringify({ svc: { security: { issuer: 'from-json' } } }));
    write('svc.config.yaml', 'svc:\n  security:\n    issuer: from-yaml\n');
    expect(loadConfig({ env: {}, cwd: dir }).security.issuer).toBe('from-json');
  });

  it('reads the file SVC_CONFIG names instead, relative to the working directory or absolute', () => {
    write('svc.config.json', JSON.stringify({ svc: { security: { issuer: 'default-file' } } }));
    write('other.yaml', 'svc:\n  security:\n    issuer: other-file\n');
    expect(loadConfig({ env: { SVC_CONFIG: 'other.yaml' }, cwd: dir }).security.issuer).toBe('other-file');
    expect(loadConfig({ env: { SVC_CONFIG: join(dir, 'other.yaml') }, cwd: '/' }).security.issuer).toBe('other-file');
  });

  it('stops when SVC_CONFIG names a file that does not exist', () => {
    const err = configError(() => loadConfig({ env: { SVC_CONFIG: 'missing.json' }, cwd: dir }));
    expect(err.key).toBe('SVC_CONFIG');
    expect(err.message).toBe(`invalid setting SVC_CONFIG: file not found: missing.json (looked in ${dir})`);
  });

  it('uses the defaults when there is no file, and says where it looked', () => {
    const config = loadConfig({ env: {}, cwd: dir });
    expect(config.security.accessTokenMinutes).toBe(15);
    expect(config.source).toBe(`no svc.config.json, svc.config.yaml or svc.config.yml in ${dir}`);
  });

  it('lets environment variables win over the file', () => {
    write('svc.config.json', JSON.stringify({
      svc: { security: { key: 'ZmlsZS1rZXk=', 'access-token-minutes': 30, jwt: { 'name-claim': 'name' } }, persistence: { cache: { provider: 'inmemory' } } },
    }));
    const config = loadConfig({
      cwd: dir,
      env: {
        SVC__SECURITY__KEY: KEY,
        SVC__SECURITY__ACCESS_TOKEN_MINUTES: '45',
        SVC__SECURITY__JWT__NAME_CLAIM: 'preferred_username',
        SVC__PERSISTENCE__CACHE__PROVIDER: 'redis',
      },
    });
    expect(config.security.key?.reveal()).toBe(KEY);
    expect(config.security.accessTokenMinutes).toBe(45);
    expect(config.security.jwt.nameClaim).toBe('preferred_username');
    expect(config.persistence.cache.provider).toBe('redis');
  });

  it('stops on a file that cannot be parsed, without quoting the file (which may hold the key)', () => {
    const secret = 'c2VjcmV0LWtleS1tYXRlcmlhbA';
    write('svc.config.json', `{"svc":{"security":{"key":${secret}}}}`);
    const err = configError(() => loadConfig({ env: {}, cwd: dir }));
    expect(err.message).toMatch(/cannot be parsed/);
    expect(err.message).not.toContain(secret.slice(0, 6));
    write('broken.yaml', `svc:\n  security:\n    key: "${secret}\n`);
    const yamlErr = configError(() => loadConfig({ env: { SVC_CONFIG: 'broken.yaml' }, cwd: dir }));
    expect(yamlErr.message).toMatch(/cannot be parsed \(invalid YAML/);
    expect(yamlErr.message).not.toContain(secret.slice(0, 6));
  });

  it('stops when the file does not hold an object, or svc is not a section', () => {
    write('svc.config.json', '[1, 2]');
    expect(configError(() => loadConfig({ env: {}, cwd: dir })).message).toMatch(/object at the top level/);
    write('svc.config.json', '{"svc": 5}');
    expect(configError(() => loadConfig({ env: {}, cwd: dir })).key).toBe('svc');
  });
});

describe('loadConfig: environment variables', () => {
  it('maps __ to sections and _ in a segment to -, case-insensitively', () => {
    const config = fromEnv({
      svc__security__access_token_minutes: '20',
      Svc__Security__Jwt__Name_Claim: 'name',
      SVC__security__PASSWORD__work_factor: '12',
      SVC__SECURITY__JWT__MAP_INBOUND_CLAIMS: 'FALSE',
      SVC__ERRORS__FORMAT: 'Simple',
    });
    expect(config.security.accessTokenMinutes).toBe(20);
    expect(config.security.jwt).toEqual({ algorithm: 'HS256', verifyOnly: false, mapInboundClaims: false, nameClaim: 'name' });
    expect(config.security.password.workFactor).toBe(12);
    expect(config.errors.format).toBe('simple');
  });

  it('ignores variables outside the SVC__ prefix and treats an empty value as unset', () => {
    const config = fromEnv({ SECURITY__ACCESS_TOKEN_MINUTES: '99', SVC_SECURITY_KEY: KEY, SVC__SECURITY__ISSUER: '' });
    expect(config.security.accessTokenMinutes).toBe(15);
    expect(config.security.key).toBeUndefined();
    expect(config.security.issuer).toBe('portcullis');
  });

  it('lets a tree stand in for the file', () => {
    const config = loadConfig({ env: { SVC__SECURITY__AUDIENCE: 'game' }, tree: { svc: { security: { issuer: 'tree', audience: 'tree' } } } });
    expect(config.security.issuer).toBe('tree');
    expect(config.security.audience).toBe('game');
    expect(config.hasSecuritySection).toBe(true);
  });
});

describe('loadConfig: invalid settings stop start-up with one message naming the key', () => {
  const cases: Array<[string, Record<string, string>, string, RegExp]> = [
    ['work factor 3', { SVC__SECURITY__PASSWORD__WORK_FACTOR: '3' }, 'svc:security:password:work-factor', /integer from 4 to 31, got "3"/],
    ['work factor 32', { SVC__SECURITY__PASSWORD__WORK_FACTOR: '32' }, 'svc:security:password:work-factor', /integer from 4 to 31/],
    ['work factor -1', { SVC__SECURITY__PASSWORD__WORK_FACTOR: '-1' }, 'svc:security:password:work-factor', /integer from 4 to 31/],
    ['work factor "abc"', { SVC__SECURITY__PASSWORD__WORK_FACTOR: 'abc' }, 'svc:security:password:work-factor', /integer from 4 to 31/],
    ['work factor 11.5', { SVC__SECURITY__PASSWORD__WORK_FACTOR: '11.5' }, 'svc:security:password:work-factor', /integer from 4 to 31/],
    ['unknown prehash', { SVC__SECURITY__PASSWORD__PREHASH: 'md5' }, 'svc:security:password:prehash', /one of "none", "sha384"/],
    ['unknown mode', { SVC__SECURITY__MODE: 'oauth' }, 'svc:security:mode', /one of "jwt"/],
    ['non-numeric minutes', { SVC__SECURITY__ACCESS_TOKEN_MINUTES: 'ten' }, 'svc:security:access-token-minutes', /integer/],
    ['zero minutes', { SVC__SECURITY__SESSION__ACCESS_MINUTES: '0' }, 'svc:security:session:access-minutes', /integer/],
    ['a typo in a setting name', { SVC__SECURITY__ACESS_TOKEN_MINUTES: '20' }, 'svc:security:acess-token-minutes', /not a known setting/],
    ['a typo inside a subsection', { SVC__SECURITY__PASSWORD__WORKFACTOR: '12' }, 'svc:security:password:workfactor', /not a known setting/],
    ['a bad boolean', { SVC__SECURITY__JWT__MAP_INBOUND_CLAIMS: 'maybe' }, 'svc:security:jwt:map-inbound-claims', /true or false/],
    ['an unknown lockout store', { SVC__SECURITY__LOCKOUT__STORE: 'disk' }, 'svc:security:lockout:store', /"memory", "backplane"/],
    ['an unknown cache provider', { SVC__PERSISTENCE__CACHE__PROVIDER: 'memcached' }, 'svc:persistence:cache:provider', /"inmemory", "redis"/],
    ['an unknown Redis topology', { SVC__PERSISTENCE__CACHE__TOPOLOGY: 'ring' }, 'svc:persistence:cache:topology', /"single", "cluster", "sentinel"/],
    ['a cluster without nodes', { SVC__PERSISTENCE__CACHE__TOPOLOGY: 'cluster' }, 'svc:persistence:cache:nodes', /at least one host:port with topology "cluster"/],
    ['a sentinel set without sentinels', { SVC__PERSISTENCE__CACHE__TOPOLOGY: 'sentinel', SVC__PERSISTENCE__CACHE__NODES: ' , ' }, 'svc:persistence:cache:nodes', /the sentinels/],
    ['nodes with a single server', { SVC__PERSISTENCE__CACHE__NODES: '10.0.0.5:7000' }, 'svc:persistence:cache:nodes', /only read with topology "cluster" or "sentinel"/],
    ['a node without a port', { SVC__PERSISTENCE__CACHE__TOPOLOGY: 'cluster', SVC__PERSISTENCE__CACHE__NODES: '10.0.0.5:7000,10.0.0.6' }, 'svc:persistence:cache:nodes', /"10.0.0.6" is not host:port/],
    ['a node port out of range', { SVC__PERSISTENCE__CACHE__TOPOLOGY: 'sentinel', SVC__PERSISTENCE__CACHE__NODES: 'redis-a:70000' }, 'svc:persistence:cache:nodes', /port from 1 to 65535/],
    ['an empty sentinel master name', { SVC__PERSISTENCE__CACHE__TOPOLOGY: 'sentinel', SVC__PERSISTENCE__CACHE__NODES: 'a:26379', SVC__PERSISTENCE__CACHE__SENTINEL_MASTER: ' ' }, 'svc:persistence:cache:sentinel-master', /must not be empty/],
    ['an unknown accounts provider', { SVC__PERSISTENCE__ACCOUNTS__PROVIDER: 'mysql' }, 'svc:persistence:accounts:provider', /"cache", "postgres"/],
    ['postgres accounts without a URL', { SVC__PERSISTENCE__ACCOUNTS__PROVIDER: 'postgres' }, 'svc:persistence:accounts:url', /must be set when accounts:provider is "postgres"/],
    ['postgres accounts on a Redis URL', { SVC__PERSISTENCE__ACCOUNTS__PROVIDER: 'postgres', SVC__PERSISTENCE__ACCOUNTS__URL: 'redis://127.0.0.1:6379' }, 'svc:persistence:accounts:url', /postgres:\/\/ or postgresql:\/\//],
    ['an accounts URL while accounts stay in the cache', { SVC__PERSISTENCE__ACCOUNTS__URL: 'postgres://db/game' }, 'svc:persistence:accounts:provider', /must be "postgres" when accounts:url is set/],
    ['a typo in the accounts section', { SVC__PERSISTENCE__ACCOUNTS__PROVDER: 'postgres' }, 'svc:persistence:accounts:provder', /not a known setting/],
    ['an unknown error format', { SVC__ERRORS__FORMAT: 'verbose' }, 'svc:errors:format', /"simple"/],
    ['an unknown captcha provider', { SVC__SECURITY__CAPTCHA__PROVIDER: 'mycaptcha' }, 'svc:security:captcha:provider', /"recaptcha"/],
    ['a captcha min-score above 1', { SVC__SECURITY__CAPTCHA__MIN_SCORE: '1.5' }, 'svc:security:captcha:min-score', /from 0 to 1/],
    ['a captcha min-score that is not a number', { SVC__SECURITY__CAPTCHA__MIN_SCORE: 'high' }, 'svc:security:captcha:min-score', /from 0 to 1/],
    ['a captcha secret without a provider', { SVC__SECURITY__CAPTCHA__SECRET_KEY: 's3cret' }, 'svc:security:captcha:provider', /secret-key is set/],
    ['min-length above max-length', { SVC__SECURITY__PASSWORD__MIN_LENGTH: '20', SVC__SECURITY__PASSWORD__MAX_LENGTH: '10' }, 'svc:security:password:min-length', /max-length/],
    ['min-key-bytes below the HS256 floor of 32', { SVC__SECURITY__MIN_KEY_BYTES: '16' }, 'svc:security:min-key-bytes', /integer from 32/],
    ['a value where a section belongs', { SVC__SECURITY__JWT: 'on' }, 'svc:security:jwt', /must be a section/],
  ];

  it.each(cases)('%s', (_name, env, key, problem) => {
    const err = configError(() => fromEnv(env));
    expect(err.key).toBe(key);
    expect(err.code).toBe('config_invalid');
    expect(err.message).toMatch(new RegExp(`^invalid setting ${key}: `));
    expect(err.message).toMatch(problem);
    expect(err.message).not.toContain('\n');
  });

  it('refuses a key or captcha secret given as a list or section without quoting what it holds', () => {
    const tree = (security: Record<string, unknown>) => ({ svc: { security: { captcha: { provider: 'hcaptcha' }, ...security } } });
    const asList = configError(() => loadConfig({ env: {}, tree: tree({ key: [KEY] }) }));
    expect(asList.key).toBe('svc:security:key');
    expect(asList.message).toMatch(/must be a string, got a list/);
    expect(asList.message).not.toContain(KEY.slice(0, 12));
    const asSection = configError(() => loadConfig({ env: {}, tree: tree({ captcha: { provider: 'hcaptcha', 'secret-key': { value: 'captcha-secret-value-123' } } }) }));
    expect(asSection.message).toMatch(/must be a string, got a section/);
    expect(asSection.message).not.toContain('captcha-secret');
  });

  it('refuses a typo in a file setting too', () => {
    const err = configError(() => loadConfig({ env: {}, tree: { svc: { security: { password: { work_factr: 12 } } } } }));
    expect(err.key).toBe('svc:security:password:work-factr');
  });
});

describe('loadConfig: svc:persistence:cache topology', () => {
  it('reads cluster seed nodes (IPv6 in brackets too) and keeps the URL for its credentials', () => {
    const { cache } = fromEnv({
      SVC__PERSISTENCE__CACHE__PROVIDER: 'redis',
      SVC__PERSISTENCE__CACHE__URL: 'redis://game:pa55@ignored:1',
      SVC__PERSISTENCE__CACHE__TOPOLOGY: 'Cluster',
      SVC__PERSISTENCE__CACHE__NODES: '10.0.0.5:7000, redis-b.internal:7001,[::1]:7002',
    }).persistence;
    expect(cache).toMatchObject({ topology: 'cluster', sentinelMaster: 'mymaster', url: 'redis://game:pa55@ignored:1' });
    expect(cache.nodes).toEqual([{ host: '10.0.0.5', port: 7000 }, { host: 'redis-b.internal', port: 7001 }, { host: '::1', port: 7002 }]);
  });

  it('reads the sentinels and the primary name', () => {
    const { cache } = fromEnv({ SVC__PERSISTENCE__CACHE__TOPOLOGY: 'sentinel', SVC__PERSISTENCE__CACHE__NODES: 's1:26379,s2:26379', SVC__PERSISTENCE__CACHE__SENTINEL_MASTER: 'game-primary' }).persistence;
    expect(cache).toMatchObject({ topology: 'sentinel', sentinelMaster: 'game-primary', nodes: [{ host: 's1', port: 26379 }, { host: 's2', port: 26379 }] });
  });

  it('never quotes the URL, which holds the password, in a topology error', () => {
    const err = configError(() => fromEnv({ SVC__PERSISTENCE__CACHE__URL: 'redis://game:hunter2@h:1', SVC__PERSISTENCE__CACHE__TOPOLOGY: 'cluster' }));
    expect(err.key).toBe('svc:persistence:cache:nodes');
    expect(err.message).not.toContain('hunter2');
  });
});

describe('loadConfig: svc:persistence:accounts', () => {
  const url = 'postgresql://portcullis:pg-password-123@db.internal:5432/game';

  it('reads the PostgreSQL provider and URL from the environment', () => {
    const config = fromEnv({ SVC__PERSISTENCE__ACCOUNTS__PROVIDER: 'Postgres', SVC__PERSISTENCE__ACCOUNTS__URL: ` ${url} ` });
    expect(config.persistence.accounts.provider).toBe('postgres');
    expect(config.persistence.accounts.url.reveal()).toBe(url);
  });

  it('never shows the URL, which holds a password: not in the result, nor in an error about it', () => {
    const config = fromEnv({ SVC__PERSISTENCE__ACCOUNTS__PROVIDER: 'postgres', SVC__PERSISTENCE__ACCOUNTS__URL: url });
    for (const out of [JSON.stringify(config), inspect(config, { depth: Infinity }), `${config.persistence.accounts.url}`]) expect(out).not.toContain('pg-password-123');
    const wrongScheme = configError(() => fromEnv({ SVC__PERSISTENCE__ACCOUNTS__PROVIDER: 'postgres', SVC__PERSISTENCE__ACCOUNTS__URL: url.replace('postgresql', 'mysql') }));
    const withoutProvider = configError(() => fromEnv({ SVC__PERSISTENCE__ACCOUNTS__URL: url }));
    for (const err of [wrongScheme, withoutProvider]) expect(err.message).not.toContain('pg-password-123');
  });
});

describe('loadConfig: the result', () => {
  it('is frozen all the way down', () => {
    const config = fromEnv({ SVC__SECURITY__KEY: KEY });
    for (const part of [config, config.security, config.security.password, config.security.jwt, config.persistence.cache, config.persistence.accounts, config.errors]) {
      expect(Object.isFrozen(part)).toBe(true);
    }
    expect(() => {
      (config.security as { issuer: string }).issuer = 'attacker';
    }).toThrow(TypeError);
    expect(config.security.issuer).toBe('portcullis');
  });

  it('never shows the key or the captcha secret in JSON, inspect or string output', () => {
    const captchaSecret = 'captcha-secret-value-123';
    const config = fromEnv({ SVC__SECURITY__KEY: KEY, SVC__SECURITY__CAPTCHA__PROVIDER: 'hcaptcha', SVC__SECURITY__CAPTCHA__SECRET_KEY: captchaSecret });
    const outputs = [JSON.stringify(config), inspect(config, { depth: Infinity }), `${config.security.key}`, String(config.security.captcha.secretKey)];
    for (const out of outputs) {
      expect(out).not.toContain(KEY);
      expect(out).not.toContain(KEY.slice(0, 12));
      expect(out).not.toContain(captchaSecret);
    }
    expect(config.security.key?.reveal()).toBe(KEY);
    expect(config.security.captcha.secretKey.reveal()).toBe(captchaSecret);
  });

  it('trims surrounding whitespace from the key', () => {
    expect(fromEnv({ SVC__SECURITY__KEY: ` ${KEY}\n` }).security.key?.reveal()).toBe(KEY);
  });
});
