import { describe, expect, it } from 'vitest';
import { silentLoggerFactory } from '../logging/logger.js';
import { MemoryCacheStore } from './memory-cache-store.js';

describe('MemoryCacheStore index sets', () => {
  it('forgets a set once its last member is removed, as Redis does, so logouts leave nothing behind', async () => {
    const cache = new MemoryCacheStore(silentLoggerFactory.create('test'));
    const week = 7 * 86_400_000;
    await cache.write([
      { kind: 'add-member', ns: 'family-sessions', key: 'fam-1', member: 'a', ttlMs: week },
      { kind: 'add-member', ns: 'family-sessions', key: 'fam-1', member: 'b', ttlMs: week },
    ]);
    await cache.write([{ kind: 'remove-member', ns: 'family-sessions', key: 'fam-1', member: 'a' }]);
    expect(await cache.remainingMs('family-sessions', 'fam-1')).toBeGreaterThan(0);
    await cache.write([{ kind: 'remove-member', ns: 'family-sessions', key: 'fam-1', member: 'b' }]);
    expect(await cache.remainingMs('family-sessions', 'fam-1')).toBe(0);
    expect(await cache.takeMembers('family-sessions', 'fam-1')).toEqual([]);
    await cache.close();
  });
});
