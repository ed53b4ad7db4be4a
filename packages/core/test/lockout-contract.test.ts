/**
 * The lockout contract, run against the memory store and the Redis backplane.
 */
import { afterEach, beforeEach, describe, expect, inject, it, vi } from 'vitest';
import { createHarness, redisTopologies, type ProviderName, type SessionHarness } from './support/session-harness.js';
import { normalizeAccountKey } from '../src/store/lockout-store.js';

const redisUrl = inject('redisUrl');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const MINUTE = 60_000;

function lockoutContract(provider: ProviderName, env: Readonly<Record<string, string>> = {}): void {
  let h: SessionHarness;

  beforeEach(async () => {
    h = await createHarness({ provider, redisUrl, env, security: { lockout: { store: provider === 'redis' ? 'backplane' : 'memory', 'max-failures': 5 } } });
  });
  afterEach(async () => {
    vi.useRealTimers();
    await h.close();
  });

  it('uses the backplane store only when configured', () => {
    expect(h.stores.lockout.provider).toBe(provider);
  });

  it('locks an account at max-failures and reports when to retry', async () => {
    for (let i = 0; i < 4; i++) expect(await h.lockout.registerFailure('alice')).toEqual({ locked: false, retryAfterSeconds: 0 });
    expect(await h.lockout.isLocked('alice')).toEqual({ locked: false, retryAfterSeconds: 0 });
    const status = await h.lockout.registerFailure('alice');
    expect(status.locked).toBe(true);
    expect(status.retryAfterSeconds).toBeGreaterThan(14 * 60);
    expect(status.retryAfterSeconds).toBeLessThanOrEqual(15 * 60);
    expect(await h.lockout.isLocked('alice')).toMatchObject({ locked: true });
    expect(await h.lockout.isLocked('bob')).toEqual({ locked: false, retryAfterSeconds: 0 });
  });

  it('counts the same account however its key is spelled', async () => {
    expect(normalizeAccountKey('  Alice@Example.COM ')).toBe('alice@example.com');
    for (const spelling of ['Alice', ' alice', 'ALICE ', 'alice', '\taLiCe\n']) await h.lockout.registerFailure(spelling);
    expect(await h.lockout.isLocked('alice')).toMatchObject({ locked: true });
  });

  it('counts concurrent failures atomically', async () => {
    await Promise.all(Array.from({ length: 4 }, () => h.lockout.registerFailure('carol')));
    expect(await h.lockout.isLocked('carol')).toMatchObject({ locked: false });
    await Promise.all(Array.from({ length: 10 }, () => h.lockout.registerFailure('carol')));
    expect(await h.lockout.isLocked('carol')).toMatchObject({ locked: true });
  });

  it('forgets failures and the lock on reset', async () => {
    for (let i = 0; i < 5; i++) await h.lockout.registerFailure('dave');
    await h.lockout.reset('DAVE');
    expect(await h.lockout.isLocked('dave')).toEqual({ locked: false, retryAfterSeconds: 0 });
    for (let i = 0; i < 4; i++) await h.lockout.registerFailure('dave');
    expect(await h.lockout.isLocked('dave')).toMatchObject({ locked: false });
  });

  if (provider === 'inmemory') {
    it('lets failures age out of the window and the lock expire (fake timers)', async () => {
      vi.useFakeTimers({ now: Date.now() });
      for (let i = 0; i < 4; i++) await h.lockout.registerFailure('erin');
      vi.advanceTimersByTime(15 * MINUTE + 1000);
      expect(await h.lockout.registerFailure('erin')).toMatchObject({ locked: false });
      for (let i = 0; i < 4; i++) await h.lockout.registerFailure('erin');
      expect(await h.lockout.isLocked('erin')).toMatchObject({ locked: true });
      vi.advanceTimersByTime(15 * MINUTE + 1000);
      expect(await h.lockout.isLocked('erin')).toEqual({ locked: false, retryAfterSeconds: 0 });
    });
  } else {
    it('lets failures age out of the window and the lock expire (short store TTLs)', async () => {
      const short = await createHarness({
        provider,
        redisUrl,
        env,
        security: { lockout: { store: 'backplane', 'max-failures': 3 } },
        stores: { lockoutTimesMs: { window: 200, lock: 300 } },
      });
      try {
        for (let i = 0; i < 2; i++) await short.lockout.registerFailure('erin');
        await sleep(250);
        expect(await short.lockout.registerFailure('erin')).toMatchObject({ locked: false });
        for (let i = 0; i < 2; i++) await short.lockout.registerFailure('erin');
        expect(await short.lockout.isLocked('erin')).toMatchObject({ locked: true, retryAfterSeconds: 1 });
        await sleep(350);
        expect(await short.lockout.isLocked('erin')).toEqual({ locked: false, retryAfterSeconds: 0 });
      } finally {
        await short.close();
      }
    });

    it('shares counters across servers of the fleet', async () => {
      const other = await h.twin();
      for (let i = 0; i < 3; i++) await h.lockout.registerFailure('frank');
      for (let i = 0; i < 2; i++) await other.lockout.registerFailure('frank');
      expect(await h.lockout.isLocked('frank')).toMatchObject({ locked: true });
      await other.lockout.reset('frank');
      expect(await h.lockout.isLocked('frank')).toMatchObject({ locked: false });
    });
  }
}

describe('lockout contract: memory', () => lockoutContract('inmemory'));
describe.skipIf(!redisUrl)(redisUrl ? 'lockout contract: redis backplane' : 'lockout contract: redis — SKIPPED, redis-server not found', () =>
  redisTopologies().forEach((topology) => describe(topology.name, () => lockoutContract('redis', topology.env))),
);
