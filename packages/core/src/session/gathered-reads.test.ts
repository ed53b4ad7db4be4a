import { afterEach, describe, expect, it, vi } from 'vitest';
import { GatheredReads } from './gathered-reads.js';

describe('GatheredReads', () => {
  afterEach(() => vi.restoreAllMocks());

  it('sends a batch with the read that joins it 10 ms after it opened, not when the turn ends (a long turn of a busy server)', async () => {
    let now = 1_000;
    vi.spyOn(performance, 'now').mockImplementation(() => now);
    const reads: string[][] = [];
    const gathered = new GatheredReads(async (keys: readonly string[]) => {
      reads.push([...keys]);
      return keys.map((key) => key.toUpperCase());
    }, 64);
    const a = gathered.read('a');
    now += 9.9;
    const b = gathered.read('b');
    expect(reads).toEqual([]); // still gathering
    now += 0.1;
    const c = gathered.read('c');
    expect(reads).toEqual([['a', 'b', 'c']]); // sent in this turn, by the read that found it 10 ms old
    const d = gathered.read('d'); // a new batch, sent when the turn ends
    expect(reads).toHaveLength(1);
    expect(await Promise.all([a, b, c, d])).toEqual(['A', 'B', 'C', 'D']);
    expect(reads).toEqual([['a', 'b', 'c'], ['d']]);
  });

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
