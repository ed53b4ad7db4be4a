import { describe, expect, it, vi } from 'vitest';
import type { JwtClaims } from '../contracts/tokens.js';
import { silentLoggerFactory } from '../logging/logger.js';
import { MemoryCacheStore } from '../store/memory-cache-store.js';
import { epochSecondsNow, STORE_EPOCH_REF } from '../store/store-epoch.js';
import { JwtInvalidation } from './jwt-invalidation.js';

const DAY_MS = 86_400_000;

function claims(sub: string, jti: string, fam?: string, iat = epochSecondsNow()): JwtClaims {
  return { sub, jti, iat, exp: iat + 900, iss: 'portcullis', aud: 'game', ...(fam === undefined ? {} : { fam }) };
}

function invalidation(): { cache: MemoryCacheStore; jwts: JwtInvalidation } {
  const cache = new MemoryCacheStore(silentLoggerFactory.create('test'));
  return { cache, jwts: new JwtInvalidation(cache, 30_000, { familyMs: 7 * DAY_MS, principalMs: 30 * DAY_MS }) };
}

describe('JwtInvalidation.isInvalidatedMany', () => {
  it('answers each JWT as isInvalidated does, in order, whether or not it has a family', async () => {
    const { cache, jwts } = invalidation();
    const past = epochSecondsNow() - 10;
    await cache.set(...STORE_EPOCH_REF, past - 100, DAY_MS);
    const batch = [
      claims('ana', 'j1', 'f1', past), // live, with a family
      claims('ben', 'j2', undefined, past), // live, without one
      claims('cai', 'j3', 'f3', past), // spent
      claims('dov', 'j4', undefined, past), // its principal cut off
      claims('eve', 'j5', 'f5', past), // its family revoked
      claims('fay', 'j6', undefined, past - 1000), // issued before the store's epoch
      claims('gus', 'j7', 'f7', past), // live again, after all of them
    ];
    await jwts.markUsed(batch[2]!);
    await jwts.cutOff('dov');
    await jwts.revokeFamily('f5');

    const many = await jwts.isInvalidatedMany(batch);
    const one = await Promise.all(batch.map((c) => jwts.isInvalidated(c)));
    expect(many).toEqual([false, false, true, true, true, true, false]);
    expect(many).toEqual(one);
  });

  it('starts a store epoch once for the batch when the store has none, and refuses what predates it', async () => {
    const now = epochSecondsNow();
    const { cache, jwts } = invalidation();
    await cache.delete(...STORE_EPOCH_REF); // as a store that lost its data
    const epochWrites = vi.spyOn(cache, 'setIfAbsent');
    const batch = [claims('ana', 'j1', 'f1', now - 5), claims('ben', 'j2', undefined, now + 5), claims('cai', 'j3', undefined, now - 5)];
    expect(await jwts.isInvalidatedMany(batch)).toEqual([true, false, true]);
    expect(epochWrites.mock.calls.filter(([ns]) => ns === STORE_EPOCH_REF[0])).toHaveLength(1);
    expect(await cache.get(...STORE_EPOCH_REF)).toBeGreaterThanOrEqual(now);
  });

  it('fails closed (an error, logged by the enforcer) when the store answers fewer values than keys, rather than reading a missing marker as not revoked', async () => {
    const { cache, jwts } = invalidation();
    await jwts.markUsed(claims('ana', 'j1'));
    vi.spyOn(cache, 'getMany').mockResolvedValue([epochSecondsNow() - 100]);
    await expect(jwts.isInvalidatedMany([claims('ana', 'j1'), claims('ben', 'j2')])).rejects.toThrow(TypeError);
    await expect(jwts.isInvalidated(claims('ana', 'j1'))).rejects.toThrow(TypeError);
    await expect(jwts.isLineageRevoked(claims('ana', 'j1'))).rejects.toThrow(TypeError);
    vi.spyOn(cache, 'peekMany').mockReturnValue([epochSecondsNow() - 100]);
    expect(jwts.isInvalidatedNow(claims('ana', 'j1'))).toBeUndefined();
  });
});
