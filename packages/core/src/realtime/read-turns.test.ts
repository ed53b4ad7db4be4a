import { performance } from 'node:perf_hooks';
import { afterEach, describe, expect, it } from 'vitest';
import { READ_TURN_BUDGET_MS, ReadTurns } from './read-turns.js';

const endOfTurn = () => new Promise((resolve) => setImmediate(resolve));
/** Keeps this loop turn busy for `ms`, as reading and answering many sockets would. */
function busy(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

describe('ReadTurns', () => {
  afterEach(endOfTurn);

  it('pauses nothing while a turn stays within its budget', async () => {
    const resumed: string[] = [];
    expect(ReadTurns.yieldAfterRead(() => resumed.push('a'))).toBe(false);
    expect(ReadTurns.yieldAfterRead(() => resumed.push('b'))).toBe(false);
    await endOfTurn();
    expect(resumed).toEqual([]);
  });

  it('pauses each connection read after the budget until the turn ends, and starts the next turn afresh', async () => {
    const resumed: string[] = [];
    expect(ReadTurns.yieldAfterRead(() => resumed.push('first'))).toBe(false);
    busy(READ_TURN_BUDGET_MS + 5);
    expect(ReadTurns.yieldAfterRead(() => resumed.push('late 1'))).toBe(true);
    expect(ReadTurns.yieldAfterRead(() => resumed.push('late 2'))).toBe(true);
    // Not before the turn ends: the same loop iteration's check phase.
    expect(resumed).toEqual([]);
    await endOfTurn();
    expect(resumed).toEqual(['late 1', 'late 2']);
    expect(ReadTurns.yieldAfterRead(() => resumed.push('next turn'))).toBe(false);
  });
});
