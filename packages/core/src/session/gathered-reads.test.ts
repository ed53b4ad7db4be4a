import { describe, expect, it } from 'vitest';
import { GatheredReads } from './gathered-reads.js';

describe('GatheredReads', () => {
  it('reads the keys asked for in one turn together, at most maxBatch a read, each caller getting its own answer', async () => {
    const reads: string[][] = [];
    const gathered = new GatheredReads(async (keys: readonly string[]) => {
      reads.push([...keys]);
      return keys.map((key) => key.toUpperCase());
    }, 3);
    const answers = await Promise.all(['a', 'b', 'c', 'd', 'e'].map((key) => gathered.read(key)));
    expect(answers).toEqual(['A', 'B', 'C', 'D', 'E']);
    expect(reads).toEqual([
      ['a', 'b', 'c'],
      ['d', 'e'],
    ]);
    // A later turn starts a new read.
    expect(await gathered.read('f')).toBe('F');
    expect(reads).toHaveLength(3);
  });

  it('fails every caller of a batch when its read fails, thrown or rejected, and serves the next turn', async () => {
    let mode: 'throw' | 'reject' | 'answer' = 'throw';
    const gathered = new GatheredReads<string, string>((keys) => {
      if (mode === 'throw') throw new Error('refused before sending');
      if (mode === 'reject') return Promise.reject(new Error('timed out'));
      return Promise.resolve(keys.map(() => 'ok'));
    }, 64);
    const thrown = await Promise.allSettled([gathered.read('a'), gathered.read('b')]);
    expect(thrown.map((o) => o.status)).toEqual(['rejected', 'rejected']);
    mode = 'reject';
    await expect(gathered.read('c')).rejects.toThrow('timed out');
    mode = 'answer';
    expect(await gathered.read('d')).toBe('ok');
  });

  it('fails every caller of a batch whose read answered fewer values than keys, rather than reading a gap as nothing there', async () => {
    const gathered = new GatheredReads(async (keys: readonly string[]) => keys.slice(1).map(() => false), 64);
    const outcomes = await Promise.allSettled([gathered.read('a'), gathered.read('b')]);
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected']);
  });
});
