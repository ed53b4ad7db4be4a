import 'reflect-metadata';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createShieldFixture, type ShieldFixture } from '../../test/support/shield-fixture.js';
import type { RevocationEvent } from '../contracts/sessions.js';
import { silentLoggerFactory } from '../logging/logger.js';
import { sessionKey } from '../session/session-token.js';
import type { Admitted } from './connection-plan.js';
import { ConnectionRegistry, MAX_PUSH_FRAME_BYTES } from './connection-registry.js';
import { GateDispatcher } from './gate-dispatcher.js';

let fx: ShieldFixture;
let registry: ConnectionRegistry;
let dispatcher: GateDispatcher;

function open(clientId: string) {
  const closed = vi.fn();
  const sent: unknown[] = [];
  const init = { clientId, transport: 'ws' as const, remoteAddress: '127.0.0.1', send: (frame: unknown) => void sent.push(frame), close: closed };
  return { init, closed, sent };
}

async function credential(token: string): Promise<Admitted> {
  const admission = await dispatcher.admit({ transport: 'ws', credential: token, clientId: 'admit', remoteAddress: undefined });
  if (!admission.ok) throw new Error(`test token refused: ${admission.code}`);
  return admission;
}

beforeEach(async () => {
  fx = await createShieldFixture();
  registry = fx.container.resolve(ConnectionRegistry);
  dispatcher = fx.container.resolve(GateDispatcher);
});

afterEach(async () => {
  registry.dispose();
  await fx.close();
});

describe('ConnectionRegistry: revocation', () => {
  it('closes the connection holding a revoked session token, forgets it and clears its memo', async () => {
    const token = await fx.session('p1');
    const a = open('a');
    const b = open('b');
    const conn = registry.add(a.init, await credential(token));
    registry.add(b.init, await credential(await fx.session('p1')));
    conn.memo.set('kept', true);
    await fx.sessions.revoke(token);
    expect(a.closed).toHaveBeenCalledWith('unauthorized', 'credential revoked');
    expect(b.closed).not.toHaveBeenCalled();
    expect(registry.get('a')).toBeUndefined();
    expect(conn.memo.size).toBe(0);
    expect(registry.size).toBe(1);
  });

  it('closes a connection authenticated with a JWT when that JWT is revoked (logout)', async () => {
    const jwt = fx.jwt('p1');
    const a = open('a');
    registry.add(a.init, await credential(jwt));
    await fx.sessions.revoke(jwt);
    expect(a.closed).toHaveBeenCalledTimes(1);
  });

  it('closes every connection of a principal on revokeAllFor, and only those', async () => {
    const [a, b, c, anon] = [open('a'), open('b'), open('c'), open('anon')];
    registry.add(a.init, await credential(await fx.session('p1')));
    registry.add(b.init, await credential(fx.jwt('p1')));
    registry.add(c.init, await credential(await fx.session('p2')));
    registry.add(anon.init);
    await fx.sessions.revokeAllFor('p1');
    expect(a.closed).toHaveBeenCalledTimes(1);
    expect(b.closed).toHaveBeenCalledTimes(1);
    expect(c.closed).not.toHaveBeenCalled();
    expect(anon.closed).not.toHaveBeenCalled();
    expect(registry.size).toBe(2);
  });

  it('follows a credential replaced by attach()', async () => {
    const first = await fx.session('p1');
    const a = open('a');
    registry.add(a.init, await credential(first));
    expect(registry.attach('a', await credential(await fx.session('p3')))).toBe(true);
    await fx.sessions.revoke(first);
    expect(a.closed).not.toHaveBeenCalled();
    await fx.sessions.revokeAllFor('p3');
    expect(a.closed).toHaveBeenCalledTimes(1);
    expect(registry.attach('gone', await credential(await fx.session('p4')))).toBe(false);
  });

  it('keeps the memo the admission filled, on add and on attach', async () => {
    const memo = new Map<unknown, unknown>([['verified by the admission', true]]);
    const a = open('a');
    const conn = registry.add({ ...a.init, memo }, await credential(await fx.session('p1')));
    expect(conn.memo).toBe(memo);
    expect(registry.attach('a', await credential(fx.jwt('p1')))).toBe(true);
    expect(registry.get('a')?.memo).toBe(memo);
    expect(memo.get('verified by the admission')).toBe(true);
  });

  it('keeps closing the others when one close callback throws', async () => {
    const a = open('a');
    const b = open('b');
    registry.add({ ...a.init, close: () => { throw new Error('socket gone'); } }, await credential(await fx.session('p1')));
    registry.add(b.init, await credential(await fx.session('p1')));
    await fx.sessions.revokeAllFor('p1');
    expect(b.closed).toHaveBeenCalledTimes(1);
    expect(registry.size).toBe(0);
  });

  it('stops listening after dispose()', async () => {
    const token = await fx.session('p1');
    const a = open('a');
    registry.add(a.init, await credential(token));
    registry.dispose();
    await fx.sessions.revoke(token);
    expect(a.closed).not.toHaveBeenCalled();
  });
});

describe('ConnectionRegistry: bookkeeping and push', () => {
  it('refuses a duplicate client id and removes idempotently', () => {
    registry.add(open('a').init);
    expect(() => registry.add(open('a').init)).toThrow(TypeError);
    registry.remove('a');
    registry.remove('a');
    expect(registry.size).toBe(0);
  });

  it('pushes to one client and to every connection of a principal', async () => {
    const [a, b, c] = [open('a'), open('b'), open('c')];
    registry.add(a.init, await credential(await fx.session('p1')));
    registry.add(b.init, await credential(fx.jwt('p1')));
    registry.add(c.init, await credential(await fx.session('p2')));
    expect(registry.sendTo('c', { type: 'event', data: 1 })).toBe(true);
    expect(registry.sendTo('nobody', { type: 'event' })).toBe(false);
    expect(registry.sendToPrincipal('p1', { type: 'event', data: 2 })).toBe(2);
    expect(registry.sendToPrincipal('nobody', { type: 'event' })).toBe(0);
    expect(a.sent).toEqual([{ type: 'event', data: 2 }]);
    expect(b.sent).toEqual([{ type: 'event', data: 2 }]);
    expect(c.sent).toEqual([{ type: 'event', data: 1 }]);
  });

  it('counts a push whose send throws as not delivered', async () => {
    registry.add({ ...open('a').init, send: () => { throw new Error('closed'); } }, await credential(await fx.session('p1')));
    expect(registry.sendTo('a', {})).toBe(false);
    expect(registry.sendToPrincipal('p1', {})).toBe(0);
  });
});

describe('ConnectionRegistry: push limits', () => {
  it('refuses, sending nothing, a frame JSON cannot encode, one over 64 KiB, or no principal id', async () => {
    const a = open('a');
    registry.add(a.init, await credential(await fx.session('p1')));
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => registry.sendToPrincipal('p1', cyclic)).toThrow(TypeError);
    expect(() => registry.sendToPrincipal('p1', { n: 1n })).toThrow(TypeError);
    expect(() => registry.sendToPrincipal('p1', undefined)).toThrow(TypeError);
    expect(() => registry.sendToPrincipal('', {})).toThrow(TypeError);
    // 22,000 euro signs are 66,000 bytes of UTF-8 but only 22,000 characters.
    expect(() => registry.sendToPrincipal('p1', { data: '€'.repeat(22_000) })).toThrow(RangeError);
    expect(a.sent).toEqual([]);
    expect(registry.sendToPrincipal('p1', { data: 'x'.repeat(MAX_PUSH_FRAME_BYTES - 20) })).toBe(1);
  });

  it('keeps a push on its own process with the in-memory store, delivering it once', async () => {
    const other = await createShieldFixture();
    try {
      const elsewhere = other.container.resolve(ConnectionRegistry);
      const b = open('b');
      elsewhere.add(b.init, await credential(await fx.session('p1')));
      const a = open('a');
      registry.add(a.init, await credential(await fx.session('p1')));
      expect(registry.sendToPrincipal('p1', { type: 'event' })).toBe(1);
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(a.sent).toEqual([{ type: 'event' }]);
      expect(b.sent).toEqual([]);
      elsewhere.dispose();
    } finally {
      await other.close();
    }
  });
});

describe('ConnectionRegistry: missed events', () => {
  it('clears every memo, closing nothing, on a gap (events may have been missed)', () => {
    let emit: (event: RevocationEvent) => void = () => undefined;
    const fake = new ConnectionRegistry({ onRevocation: (listener) => ((emit = listener), () => undefined) }, silentLoggerFactory);
    const a = open('a');
    const conn = fake.add(a.init, { ok: true, credential: { kind: 'session', token: 'x' }, principal: { id: 'p', name: undefined, roles: [], claims: {}, via: 'session' } });
    conn.memo.set('kept', true);
    emit({ kind: 'gap' });
    expect(conn.memo.size).toBe(0);
    expect(a.closed).not.toHaveBeenCalled();
    emit({ kind: 'revoked', sessionKeys: [sessionKey('x')], jtis: [] });
    expect(a.closed).toHaveBeenCalledTimes(1);
  });
});
