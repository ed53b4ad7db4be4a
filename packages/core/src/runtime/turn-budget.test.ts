import { describe, expect, it } from 'vitest';
import { TurnBudget, type HeldReader } from './turn-budget.js';

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

function gauge(overdueMs: number) {
  return { overdueMs: () => overdueMs };
}

function reader(log: string[], name: string): HeldReader {
  return { resumeAfterTurn: () => log.push(name) };
}

describe('TurnBudget', () => {
  it('is spent once the turn has run past its timers by more than the budget', () => {
    expect(new TurnBudget(gauge(29), 30).spent()).toBe(false);
    expect(new TurnBudget(gauge(30), 30).spent()).toBe(false);
    expect(new TurnBudget(gauge(31), 30).spent()).toBe(true);
    expect(new TurnBudget(gauge(-25), 30).spent()).toBe(false);
  });

  it('holds a connection after a read past the budget only once nothing more is buffered', async () => {
    const resumed: string[] = [];
    const connection = reader(resumed, 'c');
    expect(new TurnBudget(gauge(31), 30).holdsAfterRead(connection, 0)).toBe(true);
    expect(new TurnBudget(gauge(31), 30).holdsAfterRead(connection, 12)).toBe(false);
    expect(new TurnBudget(gauge(30), 30).holdsAfterRead(connection, 0)).toBe(false);
    await nextTurn();
    expect(resumed).toEqual(['c']);
  });

  it('resumes every held reader once, after the poll phase, not while the turn goes on', async () => {
    const budget = new TurnBudget(gauge(100), 30);
    const resumed: string[] = [];
    const a = reader(resumed, 'a');
    budget.hold(a);
    budget.hold(reader(resumed, 'b'));
    budget.hold(a);
    expect(resumed).toEqual([]);
    await nextTurn();
    expect(resumed).toEqual(['a', 'b']);
    await nextTurn();
    expect(resumed).toEqual(['a', 'b']);
  });

  it('resumes a reader held while others are being resumed in the turn after', async () => {
    const budget = new TurnBudget(gauge(100), 30);
    const resumed: string[] = [];
    const late = reader(resumed, 'late');
    budget.hold({
      resumeAfterTurn: () => {
        resumed.push('first');
        budget.hold(late);
      },
    });
    await nextTurn();
    expect(resumed).toEqual(['first']);
    await nextTurn();
    expect(resumed).toEqual(['first', 'late']);
  });
});
