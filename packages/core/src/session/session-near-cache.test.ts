import { afterEach, describe, expect, it, vi } from 'vitest';
import { stall } from '../../../../test/support/event-loop.js';
import type { Principal } from '../contracts/principal.js';
import { EventLoopLag } from '../runtime/event-loop-lag.js';
import { SessionNearCache } from './session-near-cache.js';
import { sessionKey } from './session-token.js';

const principal = (id: string): Principal => ({ id, name: undefined, roles: [], claims: {}, via: 'session' });
const FAR = Date.parse('2031-01-01T00:00:00Z');

afterEach(() => {
  vi.useRealTimers();
});

describe('SessionNearCache', () => {
  it('keeps an entry at most its TTL and never past the token expiry', () => {
    vi.useFakeTimers({ now: new Date('2030-01-01T00:00:00Z'), toFake: ['Date'] });
    const near = new SessionNearCache(5000);
    near.put('a', principal('a'), FAR);
    near.put('b', principal('b'), Date.now() + 1000);
    expect(near.get('a')?.id).toBe('a');
    vi.setSystemTime(Date.now() + 1000);
    expect(near.get('b')).toBeUndefined();
    vi.setSystemTime(Date.now() + 4000);
    expect(near.get('a')).toBeUndefined();
  });

  it("counts an entry's TTL from when its store read was asked for, so a slow read serves nothing older than the TTL", () => {
    vi.useFakeTimers({ now: new Date('2030-01-01T00:00:00Z'), toFake: ['Date'] });
    const near = new SessionNearCache(5000);
    const readAt = Date.now();
    vi.setSystemTime(readAt + 3900); // the read took 3.9 s (a server far behind); entries live 4–5 s
    near.put('slow', principal('s'), FAR, readAt);
    expect(near.get('slow')?.id).toBe('s');
    vi.setSystemTime(readAt + 5000);
    expect(near.get('slow')).toBeUndefined();
    near.put('too-slow', principal('t'), FAR, readAt); // answered after a whole TTL: not kept at all
    expect(near.get('too-slow')).toBeUndefined();
  });

  it('asks for renewal from a tenth into an entry made while the event loop is far behind, and from half its TTL otherwise', () => {
    const asked: string[] = [];
    const ttl = 600; // renewal's window 300 ms; "far behind" is more than 100 ms
    const near = new SessionNearCache(ttl, undefined, (token) => asked.push(token) > 0);
    vi.useFakeTimers({ now: new Date('2030-01-01T00:00:00Z'), toFake: ['Date'] }); // the lag gauge keeps real time
    EventLoopLag.shared().behindMs(); // the gauge runs from here
    near.put('kept-up', principal('k'), FAR);
    stall(150); // the loop is 150 ms behind now, as a server whose turns run long
    near.put('behind', principal('b'), FAR);
    vi.setSystemTime(Date.now() + ttl * 0.15);
    expect(near.get('behind')?.id).toBe('b');
    expect(near.get('kept-up')?.id).toBe('k');
    expect(asked).toEqual(['behind']); // a renewal now has several long turns to come back in
    vi.setSystemTime(Date.now() + ttl * 0.4); // past half of both lifetimes (0.8–1 TTL), before their ends
    expect(near.get('kept-up')?.id).toBe('k');
    expect(asked).toEqual(['behind', 'kept-up']);
  });

  it('lets a renewal lengthen a live entry, keeping the value it holds and the names a revocation drops it by', () => {
    vi.useFakeTimers({ now: new Date('2030-01-01T00:00:00Z'), toFake: ['Date'] });
    const near = new SessionNearCache(5000);
    const held = principal('a');
    near.put('a-token', held, FAR);
    near.put('b-token', principal('a'), FAR);
    vi.setSystemTime(Date.now() + 3000);
    near.renew('a-token', principal('a'), FAR); // the store read again: the same record, parsed anew
    vi.setSystemTime(Date.now() + 3000); // past the first lifetime (4–5 s), within the renewed one
    expect(near.get('a-token')).toBe(held);
    expect(near.get('b-token')).toBeUndefined();
    near.dropAlias(sessionKey('a-token'));
    expect(near.get('a-token')).toBeUndefined();

    near.put('c-token', principal('c'), FAR);
    near.renew('c-token', principal('c'), FAR);
    near.dropPrincipal('c');
    expect(near.get('c-token')).toBeUndefined();
    near.renew('d-token', principal('d'), FAR); // nothing live under it: kept as put would
    expect(near.get('d-token')?.id).toBe('d');
  });

  it('sweeps entries nobody reads again once they expire, instead of holding them until the cap', () => {
    vi.useFakeTimers({ now: new Date('2030-01-01T00:00:00Z'), toFake: ['Date'] });
    const near = new SessionNearCache(1000);
    for (let i = 0; i < 50; i++) near.put(`old-${i}`, principal('p'), FAR);
    expect(near.size).toBe(50);
    vi.setSystemTime(Date.now() + 1500);
    near.put('fresh', principal('q'), FAR);
    expect(near.size).toBe(1);
    expect(near.get('fresh')?.id).toBe('q');
  });

  it('sweeps expired entries when only renewals come, as when every session still connected renews in place', () => {
    vi.useFakeTimers({ now: new Date('2030-01-01T00:00:00Z'), toFake: ['Date'] });
    const near = new SessionNearCache(1000);
    for (let i = 0; i < 50; i++) near.put(`gone-${i}`, principal('p'), FAR); // players who left
    near.put('staying', principal('q'), FAR);
    vi.setSystemTime(Date.now() + 600);
    near.renew('staying', principal('q'), FAR);
    vi.setSystemTime(Date.now() + 500); // the others ended at 800–1,000 ms
    near.renew('staying', principal('q'), FAR);
    expect(near.size).toBe(1);
    expect(near.get('staying')?.id).toBe('q');
  });

  it('stays within its cap under a flood of live entries', () => {
    const near = new SessionNearCache(60_000, 100);
    for (let i = 0; i < 1000; i++) near.put(`t-${i}`, principal('p'), FAR);
    expect(near.size).toBeLessThanOrEqual(100);
  });
});
