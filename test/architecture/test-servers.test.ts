/**
 * The test run's own servers: under CI a machine without PostgreSQL or Redis fails the run
 * instead of skipping its suites; elsewhere the run goes on without them, after a warning.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import setup from '../support/global-setup.js';
import { findPostgresBinDir } from '../support/postgres-server.js';
import { findRedisServerBinary } from '../support/redis-server.js';

const saved = { CI: process.env.CI, POSTGRES_BIN_DIR: process.env.POSTGRES_BIN_DIR, REDIS_SERVER_BIN: process.env.REDIS_SERVER_BIN };

afterEach(() => {
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  vi.restoreAllMocks();
});

describe('the test setup without PostgreSQL', () => {
  it('finds no PostgreSQL when POSTGRES_BIN_DIR names a directory without it', () => {
    expect(findPostgresBinDir({ POSTGRES_BIN_DIR: '/nonexistent/postgresql/bin' })).toBeUndefined();
  });

  it('fails the run under CI=true', async () => {
    Object.assign(process.env, { CI: 'true', POSTGRES_BIN_DIR: '/nonexistent/postgresql/bin' });
    const provided = new Map<string, unknown>();
    await expect(setup({ provide: (key: string, value: unknown) => void provided.set(key, value) } as never)).rejects.toThrow(
      // Redis is looked for first; without it that is the failure, as it must be under CI.
      findRedisServerBinary() ? /PostgreSQL is required in CI/ : /redis-server is required in CI/,
    );
    expect(provided.has('postgresUrl')).toBe(false);
  });

  it('outside CI, warns that the PostgreSQL suites are skipped and provides no URL', async () => {
    Object.assign(process.env, { CI: 'false', POSTGRES_BIN_DIR: '/nonexistent/postgresql/bin' });
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const provided = new Map<string, unknown>();
    const teardown = await setup({ provide: (key: string, value: unknown) => void provided.set(key, value) } as never);
    await teardown();
    expect(provided.get('postgresUrl')).toBeNull();
    expect(warn.mock.calls.flat().join('\n')).toMatch(/PostgreSQL not found: every PostgreSQL-backed test is SKIPPED/);
  });
});

describe('the test setup without Redis', () => {
  it('fails the run under CI=true before it starts anything', async () => {
    Object.assign(process.env, { CI: 'true', REDIS_SERVER_BIN: '/nonexistent/redis-server' });
    expect(findRedisServerBinary()).toBeUndefined();
    const provided = new Map<string, unknown>();
    await expect(setup({ provide: (key: string, value: unknown) => void provided.set(key, value) } as never)).rejects.toThrow(/redis-server is required in CI/);
    expect([...provided.keys()]).toEqual([]);
  });

  it('outside CI, warns that the Redis suites are skipped and provides no Redis', async () => {
    Object.assign(process.env, { CI: 'false', REDIS_SERVER_BIN: '/nonexistent/redis-server', POSTGRES_BIN_DIR: '/nonexistent/postgresql/bin' });
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const provided = new Map<string, unknown>();
    const teardown = await setup({ provide: (key: string, value: unknown) => void provided.set(key, value) } as never);
    await teardown();
    expect(provided.get('redisUrl')).toBeNull();
    expect(provided.get('redisClusterNodes')).toBeNull();
    expect(provided.get('redisSentinelNodes')).toBeNull();
    expect(warn.mock.calls.flat().join('\n')).toMatch(/redis-server not found: every Redis-backed test is SKIPPED/);
  });
});
