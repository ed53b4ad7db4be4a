import { describe, expect, it } from 'vitest';
import { ReplySequencer } from './reply-sequencer.js';

function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('ReplySequencer', () => {
  it('delivers replies in request order even when later ones settle first', async () => {
    const out: string[] = [];
    const seq = new ReplySequencer<string>({ deliver: (r) => out.push(r) });
    const first = deferred<string>();
    const second = deferred<string>();
    seq.push(first.promise);
    seq.push(second.promise);
    seq.push('third');
    second.resolve('second');
    await tick();
    expect(out).toEqual([]);
    first.resolve('first');
    await tick();
    expect(out).toEqual(['first', 'second', 'third']);
    expect(seq.pending).toBe(0);
  });

  it('delivers a synchronous reply at once when nothing is pending', () => {
    const out: string[] = [];
    new ReplySequencer<string>({ deliver: (r) => out.push(r) }).push('now');
    expect(out).toEqual(['now']);
  });

  it('skips requests that produce no reply and reports a rejected one without stalling', async () => {
    const out: string[] = [];
    const errors: unknown[] = [];
    const seq = new ReplySequencer<string>({ deliver: (r) => out.push(r), onError: (e) => errors.push(e) });
    seq.push(Promise.resolve(undefined));
    seq.push(Promise.reject(new Error('boom')));
    seq.push(Promise.resolve('after'));
    await tick();
    expect(out).toEqual(['after']);
    expect(errors).toHaveLength(1);
  });

  it('signals saturation at maxPending and relief at half of it', async () => {
    const events: string[] = [];
    const seq = new ReplySequencer<string>({
      deliver: () => {},
      maxPending: 4,
      onSaturated: () => events.push('saturated'),
      onRelieved: () => events.push('relieved'),
    });
    const pending = [0, 1, 2, 3].map(() => deferred<string>());
    for (const p of pending) seq.push(p.promise);
    expect(events).toEqual(['saturated']);
    pending[0]!.resolve('a');
    await tick();
    expect(events).toEqual(['saturated']);
    pending[1]!.resolve('b');
    await tick();
    expect(events).toEqual(['saturated', 'relieved']);
  });

  it('counts replies that are ready but wait behind a slow one: a flood of instant answers behind one slow request still saturates', async () => {
    const events: string[] = [];
    const out: string[] = [];
    const seq = new ReplySequencer<string>({ deliver: (r) => out.push(r), maxPending: 4, onSaturated: () => events.push('saturated'), onRelieved: () => events.push('relieved') });
    const slow = deferred<string>();
    seq.push(slow.promise);
    for (let i = 0; i < 3; i++) seq.push(`instant-${i}`);
    expect(seq.pending).toBe(4);
    expect(seq.isSaturated).toBe(true);
    expect(events).toEqual(['saturated']);
    slow.resolve('slow');
    await tick();
    expect(out).toEqual(['slow', 'instant-0', 'instant-1', 'instant-2']);
    expect(events).toEqual(['saturated', 'relieved']);
  });

  it('delivers nothing after close', async () => {
    const out: string[] = [];
    const seq = new ReplySequencer<string>({ deliver: (r) => out.push(r) });
    const late = deferred<string>();
    seq.push(late.promise);
    seq.close();
    late.resolve('late');
    seq.push('later');
    await tick();
    expect(out).toEqual([]);
  });
});
