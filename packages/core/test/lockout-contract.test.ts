/**
 * The lockout contract, run against the memory store and the Redis backplane.
 */
import 'reflect-metadata';
import { afterEach, beforeEach, describe, expect, inject, it, vi } from 'vitest';
import { addressBucket } from '../src/store/address-bucket.js';
import type { LockoutStore } from '@portcullis/core';
import { normalizeAccountKey } from '../src/store/lockout-store.js';
import { createHarness, redisTopologies, type ProviderName, type SessionHarness } from './support/session-harness.js';

const redisUrl = inject('redisUrl');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const MINUTE = 60_000;

/** One failed login: claimed before the password check, then recorded as failed. */
async function fail(lockout: LockoutStore, name: string) {
  const claim = await lockout.claimAccountAttempt(name);
  if (!claim.locked) await lockout.accountAttemptFailed(name, claim);
  return claim;
}

function lockoutContract(provider: ProviderName, env: Readonly<Record<string, string>> = {}): void {
  let h: SessionHarness;

  beforeEach(async () => {
    h = await createHarness({
      provider,
      redisUrl,
      env,
      security: { lockout: { store: provider === 'redis' ? 'backplane' : 'memory', 'max-failures': 5, 'ip-max-failures': 4 } },
    });
  });
  afterEach(async () => {
    vi.useRealTimers();
    await h.close();
  });

  it('uses the backplane store only when configured', () => {
    expect(h.stores.lockout.provider).toBe(provider);
  });

  it('locks an account after max-failures failed attempts and reports when to retry', async () => {
    for (let i = 0; i < 4; i++) expect(await fail(h.lockout, 'alice')).toEqual({ locked: false, retryAfterSeconds: 0, last: false });
    expect(await h.lockout.isLocked('alice')).toEqual({ locked: false, retryAfterSeconds: 0 });
    expect(await fail(h.lockout, 'alice')).toEqual({ locked: false, retryAfterSeconds: 0, last: true });
    const status = await h.lockout.isLocked('alice');
    expect(status.locked).toBe(true);
    expect(status.retryAfterSeconds).toBeGreaterThan(14 * 60);
    expect(status.retryAfterSeconds).toBeLessThanOrEqual(15 * 60);
    expect(await h.lockout.claimAccountAttempt('alice')).toMatchObject({ locked: true, retryAfterSeconds: status.retryAfterSeconds });
    expect(await h.lockout.isLocked('bob')).toEqual({ locked: false, retryAfterSeconds: 0 });
  });

  it('counts the same account however its key is spelled', async () => {
    expect(normalizeAccountKey('  Alice@Example.COM ')).toBe('alice@example.com');
    for (const spelling of ['Alice', ' alice', 'ALICE ', 'alice', '\taLiCe\n']) await fail(h.lockout, spelling);
    expect(await h.lockout.isLocked('alice')).toMatchObject({ locked: true });
  });

  it('allows exactly max-failures of any number of concurrent attempts a password check', async () => {
    const claims = await Promise.all(Array.from({ length: 40 }, () => h.lockout.claimAccountAttempt('carol')));
    expect(claims.filter((c) => !c.locked)).toHaveLength(5);
    expect(claims.filter((c) => c.last)).toHaveLength(1);
    expect(await h.lockout.isLocked('carol')).toMatchObject({ locked: true });
  });

  it('forgets attempts and the lock on reset (a successful login, or an operator unlocking)', async () => {
    for (let i = 0; i < 5; i++) await fail(h.lockout, 'dave');
    await h.lockout.reset('DAVE');
    expect(await h.lockout.isLocked('dave')).toEqual({ locked: false, retryAfterSeconds: 0 });
    for (let i = 0; i < 4; i++) await fail(h.lockout, 'dave');
    expect(await h.lockout.isLocked('dave')).toMatchObject({ locked: false });
  });

  it('limits a client address to ip-max-failures; a released attempt does not count; the /64 of an IPv6 address is one address', async () => {
    for (let i = 0; i < 4; i++) expect(await h.lockout.claimAddressAttempt('2001:db8:1:2::10')).toMatchObject({ locked: false });
    expect(await h.lockout.claimAddressAttempt('2001:db8:1:2:ffff::99')).toMatchObject({ locked: true });
    expect(await h.lockout.claimAddressAttempt('2001:db8:1:3::10')).toMatchObject({ locked: false });
    for (let i = 0; i < 3; i++) await h.lockout.claimAddressAttempt('10.0.0.1');
    await h.lockout.releaseAddressAttempt('10.0.0.1');
    expect(await h.lockout.claimAddressAttempt('::ffff:10.0.0.1')).toMatchObject({ locked: false });
    expect(await h.lockout.claimAddressAttempt('10.0.0.1')).toMatchObject({ locked: false });
    expect(await h.lockout.claimAddressAttempt('10.0.0.1')).toMatchObject({ locked: true });
    await h.lockout.resetAddress('10.0.0.1');
    expect(await h.lockout.claimAddressAttempt('10.0.0.1')).toMatchObject({ locked: false });
    expect(await h.lockout.claimAddressAttempt(undefined)).toMatchObject({ locked: false });
  });

  if (provider === 'inmemory') {
    it('lets attempts age out of the window and the lock expire (fake timers)', async () => {
      vi.useFakeTimers({ now: Date.now() });
      for (let i = 0; i < 4; i++) await fail(h.lockout, 'erin');
      vi.advanceTimersByTime(15 * MINUTE + 1000);
      expect(await fail(h.lockout, 'erin')).toMatchObject({ locked: false, last: false });
      for (let i = 0; i < 4; i++) await fail(h.lockout, 'erin');
      expect(await h.lockout.isLocked('erin')).toMatchObject({ locked: true });
      vi.advanceTimersByTime(15 * MINUTE + 1000);
      expect(await h.lockout.isLocked('erin')).toEqual({ locked: false, retryAfterSeconds: 0 });
      expect(await h.lockout.claimAccountAttempt('erin')).toMatchObject({ locked: false });
    });
  } else {
    it('lets attempts age out of the window and the lock expire (short store TTLs)', async () => {
      const short = await createHarness({
        provider,
        redisUrl,
        env,
        security: { lockout: { store: 'backplane', 'max-failures': 3 } },
        stores: { lockoutTimesMs: { window: 200, lock: 600 } },
      });
      try {
        for (let i = 0; i < 2; i++) await fail(short.lockout, 'erin');
        await sleep(250);
        expect(await fail(short.lockout, 'erin')).toMatchObject({ locked: false, last: false });
        for (let i = 0; i < 2; i++) await fail(short.lockout, 'erin');
        // The lock outlives the 200 ms window: it runs lock-minutes from the last allowed failure.
        await sleep(300);
        expect(await short.lockout.isLocked('erin')).toMatchObject({ locked: true, retryAfterSeconds: 1 });
        await sleep(400);
        expect(await short.lockout.isLocked('erin')).toEqual({ locked: false, retryAfterSeconds: 0 });
      } finally {
        await short.close();
      }
    });

    it('shares counters across servers of the fleet', async () => {
      const other = await h.twin();
      for (let i = 0; i < 3; i++) await fail(h.lockout, 'frank');
      for (let i = 0; i < 2; i++) await fail(other.lockout, 'frank');
      expect(await h.lockout.isLocked('frank')).toMatchObject({ locked: true });
      await other.lockout.reset('frank');
      expect(await h.lockout.isLocked('frank')).toMatchObject({ locked: false });
      for (let i = 0; i < 4; i++) await other.lockout.claimAddressAttempt('192.0.2.7');
      expect(await h.lockout.claimAddressAttempt('192.0.2.7')).toMatchObject({ locked: true });
    });
  }
}

describe('address buckets', () => {
  it('keep IPv4 addresses whole and group IPv6 addresses by their /64', () => {
    expect(addressBucket('203.0.113.9')).toBe('203.0.113.9');
    expect(addressBucket('::ffff:203.0.113.9')).toBe('203.0.113.9');
    expect(addressBucket('2001:DB8:0:0:1::1')).toBe('2001:db8:0:0::/64');
    expect(addressBucket('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(addressBucket('::1')).toBe('0:0:0:0::/64');
    expect(addressBucket('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
  });
});

describe('lockout contract: memory', () => lockoutContract('inmemory'));
describe.skipIf(!redisUrl)(redisUrl ? 'lockout contract: redis backplane' : 'lockout contract: redis — SKIPPED, redis-server not found', () =>
  redisTopologies().forEach((topology) => describe(topology.name, () => lockoutContract('redis', topology.env))),
);
