import { afterEach, describe, expect, it, vi } from 'vitest';
import type { JwtClaims } from '../contracts/tokens.js';
import { JwtNearCache } from './jwt-near-cache.js';

const NOW = Date.parse('2030-01-01T00:00:00Z');
const claims = (jti: string, sub: string, fam?: string, expInSeconds = 900): JwtClaims =>
  ({ jti, sub, fam, iat: NOW / 1000, exp: NOW / 1000 + expInSeconds, iss: 'i', aud: 'a' }) as unknown as JwtClaims;

afterEach(() => {
  vi.useRealTimers();
});

describe('JwtNearCache', () => {
  it('drops entries by jti, by login family and by principal, leaving the others', () => {
    vi.useFakeTimers({ now: NOW, toFake: ['Date'] });
    const near = new JwtNearCache(5000);
    for (const c of [claims('j1', 'ann', 'f1'), claims('j2', 'ann', 'f2'), claims('j3', 'bob', 'f1'), claims('j4', 'bob'), claims('j5', 'cy', 'f3')]) near.keep(c);
    near.drop('j4');
    expect(near.has('j4')).toBe(false);
    near.dropFamily('f1');
    expect([near.has('j1'), near.has('j3'), near.has('j2')]).toEqual([false, false, true]);
    near.dropPrincipal('ann');
    expect(near.has('j2')).toBe(false);
    expect(near.has('j5')).toBe(true);
    near.clear();
    expect(near.has('j5')).toBe(false);
    expect(near.size).toBe(0);
  });

  it('keeps an entry at most its TTL and never past the JWT exp', () => {
    vi.useFakeTimers({ now: NOW, toFake: ['Date'] });
    const near = new JwtNearCache(5000);
    near.keep(claims('long', 'ann'));
    near.keep(claims('short', 'ann', undefined, 1));
    vi.setSystemTime(NOW + 1000);
    expect(near.has('short')).toBe(false);
    expect(near.has('long')).toBe(true);
    vi.setSystemTime(NOW + 5000);
    expect(near.has('long')).toBe(false);
  });

  it('keeps nothing when disabled (TTL 0), and stays within its cap', () => {
    const off = new JwtNearCache(0);
    off.keep(claims('j', 'ann'));
    expect(off.has('j')).toBe(false);
    vi.useFakeTimers({ now: NOW, toFake: ['Date'] });
    const capped = new JwtNearCache(60_000, 100);
    for (let i = 0; i < 1000; i++) capped.keep(claims(`j${i}`, `p${i % 7}`, `f${i % 3}`));
    expect(capped.size).toBeLessThanOrEqual(100);
  });
});
