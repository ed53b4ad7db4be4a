import { describe, expect, it } from 'vitest';
import { RecentRevocations } from './recent-revocations.js';

describe('RecentRevocations', () => {
  it('tells a read which of its sessions a revocation since it began named, by key or by principal', () => {
    const recent = new RecentRevocations();
    const since = recent.generation;
    expect(recent.mayHaveRevoked(since, 'key-a', 'alice')).toBe(false);
    recent.revoked(['key-a'], undefined);
    recent.revoked([], 'bob');
    expect(recent.mayHaveRevoked(since, 'key-a', 'alice')).toBe(true);
    expect(recent.mayHaveRevoked(since, 'key-b', 'bob')).toBe(true);
    expect(recent.mayHaveRevoked(since, 'key-c', 'carol')).toBe(false);
    // A read that began after them overlapped none.
    expect(recent.mayHaveRevoked(recent.generation, 'key-a', 'alice')).toBe(false);
  });

  it('cannot tell, and says so, for a read that began before a gap', () => {
    const recent = new RecentRevocations();
    const since = recent.generation;
    recent.gap();
    expect(recent.mayHaveRevoked(since, 'key-c', 'carol')).toBe(true);
    expect(recent.mayHaveRevoked(recent.generation, 'key-c', 'carol')).toBe(false);
  });

  it('cannot tell, and says so, for a read that overlapped more revocations than it remembers (1,024)', () => {
    const recent = new RecentRevocations();
    const before = recent.generation;
    recent.revoked(['key-0'], undefined);
    const after = recent.generation;
    for (let i = 1; i < 1024; i++) recent.revoked([`key-${i}`], undefined);
    expect(recent.mayHaveRevoked(before, 'key-x', 'xavier')).toBe(false);
    recent.revoked(['key-1024'], undefined); // the first one is forgotten now
    expect(recent.mayHaveRevoked(before, 'key-x', 'xavier')).toBe(true);
    expect(recent.mayHaveRevoked(after, 'key-x', 'xavier')).toBe(false);
    expect(recent.mayHaveRevoked(after, 'key-1024', 'xavier')).toBe(true);
  });

});
