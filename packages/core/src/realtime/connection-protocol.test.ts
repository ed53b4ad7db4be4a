import 'reflect-metadata';
import { errorReply, type GateReply } from '@portcullis/protocol';
import { describe, expect, it } from 'vitest';
import type { Principal } from '../contracts/principal.js';
import { silentLoggerFactory } from '../logging/logger.js';
import type { ConnectionContext } from './connection-context.js';
import type { Admission } from './connection-plan.js';
import { ConnectionRegistry, type ConnectionInit } from './connection-registry.js';
import { ConnectionProtocol } from './connection-protocol.js';
import type { ConnectionProtocolOptions, ProtocolCloseReason } from './connection-protocol-options.js';

const alice: Principal = { id: 'alice', name: undefined, roles: [], claims: {}, via: 'session' };
const tick = () => new Promise((resolve) => setImmediate(resolve));

function fakeDispatcher(auth: (token: unknown) => Admission) {
  const dispatch = async (raw: unknown, conn: ConnectionContext): Promise<GateReply> => {
    const frame = raw as { id?: unknown; gate?: string };
    if (typeof frame?.id !== 'number') return errorReply(null, 'bad_request');
    return { id: frame.id, ok: true, data: `${frame.gate} by ${conn.credential ?? 'anonymous'}` };
  };
  return {
    dispatch,
    dispatchText: async (text: string | Uint8Array, conn: ConnectionContext) => {
      try {
        return await dispatch(JSON.parse(String(text)), conn);
      } catch {
        return errorReply(null, 'bad_request');
      }
    },
    admit: async (ctx: { credential: string | undefined }) => auth(ctx.credential),
    refreshConnection: async () => ({ reply: { type: 'refresh' as const, ok: false as const, error: { code: 'unauthorized' as const, message: 'no' } } }),
  };
}

function harness(overrides: Partial<ConnectionProtocolOptions> = {}) {
  const sent: unknown[] = [];
  const closed: ProtocolCloseReason[] = [];
  const protocol = new ConnectionProtocol({
    dispatcher: fakeDispatcher((token) =>
      token === 'good' ? { ok: true, principal: alice, credential: { kind: 'session', token } } : { ok: false, code: 'unauthorized', message: 'no' },
    ),
    registry: new ConnectionRegistry({ onRevocation: () => () => undefined }, silentLoggerFactory),
    transport: 'tcp',
    clientId: 'c1',
    remoteAddress: undefined,
    handshake: 'required',
    send: (text) => sent.push(JSON.parse(text)),
    close: (reason) => closed.push(reason),
    ...overrides,
  });
  return { protocol, sent, closed };
}

describe('ConnectionProtocol', () => {
  it('closes the connection, without an unhandled rejection, when the transport\'s send throws', async () => {
    const closed: ProtocolCloseReason[] = [];
    const { protocol } = harness({
      send: () => {
        throw new Error('socket gone');
      },
      close: (reason) => closed.push(reason),
    });
    protocol.receive('{"type":"auth","token":"good"}');
    protocol.receive('{"id":1,"portal":"/p","gate":"a"}');
    await tick();
    expect(closed).toEqual(['unavailable']);
    expect(protocol.isOpen).toBe(false);
  });

  it('answers requests pipelined behind the auth frame after the auth reply, in order', async () => {
    const { protocol, sent } = harness();
    protocol.receive('{"type":"auth","token":"good"}');
    protocol.receive('{"id":1,"portal":"/p","gate":"a"}');
    protocol.receive('{"id":2,"portal":"/p","gate":"b"}');
    await tick();
    expect(sent).toEqual([
      { type: 'auth', ok: true },
      { id: 1, ok: true, data: 'a by good' },
      { id: 2, ok: true, data: 'b by good' },
    ]);
  });

  it('keeps a reply answered at once behind one still being answered, and sends it as soon as that one is out', async () => {
    let finishSlow: (() => void) | undefined;
    const slowThenFast = {
      ...fakeDispatcher(() => ({ ok: false, code: 'unauthorized', message: 'no' })),
      // Gate `slow` answers when the test lets it; any other answers at once, as a near-cache hit does.
      dispatch: (raw: unknown): GateReply | Promise<GateReply> => {
        const { id, gate } = raw as { id: number; gate: string };
        if (gate !== 'slow') return { id, ok: true, data: gate };
        return new Promise((resolve) => (finishSlow = () => resolve({ id, ok: true, data: gate })));
      },
    };
    const { protocol, sent } = harness({ handshake: 'optional', dispatcher: slowThenFast });
    protocol.receive('{"id":1,"portal":"/p","gate":"slow"}');
    protocol.receive('{"id":2,"portal":"/p","gate":"fast"}');
    await tick();
    expect(sent).toEqual([]);
    finishSlow!();
    await tick();
    protocol.receive('{"id":3,"portal":"/p","gate":"fast"}');
    expect(sent).toEqual([
      { id: 1, ok: true, data: 'slow' },
      { id: 2, ok: true, data: 'fast' },
      { id: 3, ok: true, data: 'fast' },
    ]);
  });

  it('closes without a reply when a required auth frame is missing', () => {
    const { protocol, sent, closed } = harness();
    protocol.receive('{"id":1,"portal":"/p","gate":"a"}');
    expect(sent).toEqual([]);
    expect(closed).toEqual(['bad_request']);
  });

  it('answers a refused credential with ok:false, then closes as unauthorized', async () => {
    const { protocol, sent, closed } = harness();
    protocol.receive('{"type":"auth","token":"bad"}');
    protocol.receive('{"id":1,"portal":"/p","gate":"a"}');
    await tick();
    expect(sent).toEqual([{ type: 'auth', ok: false, error: { code: 'unauthorized', message: 'no' } }]);
    expect(closed).toEqual(['unauthorized']);
  });

  it('serves anonymously when an optional auth frame is not sent', async () => {
    const { protocol, sent } = harness({ handshake: 'optional' });
    protocol.receive('{"id":5,"portal":"/p","gate":"a"}');
    await tick();
    expect(sent).toEqual([{ id: 5, ok: true, data: 'a by anonymous' }]);
  });

  it('sends the ok:false auth frame and closes when the registry reports the credential revoked', async () => {
    let init: ConnectionInit | undefined;
    const registry = {
      add: (i: ConnectionInit) => ((init = i), { ...i, credential: undefined, memo: new Map(), principalId: undefined }),
      attach: () => true,
      remove: () => {},
    };
    const { protocol, sent, closed } = harness({ registry });
    protocol.receive('{"type":"auth","token":"good"}');
    await tick();
    init!.close('unauthorized', 'credential revoked');
    protocol.receive('{"id":9,"portal":"/p","gate":"a"}');
    await tick();
    expect(sent).toEqual([{ type: 'auth', ok: true }, { type: 'auth', ok: false, error: { code: 'unauthorized', message: 'the credential was revoked' } }]);
    expect(closed).toEqual(['unauthorized']);
  });
});

describe('ConnectionProtocol: how long a request can have waited (noteRead)', () => {
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  function waits() {
    const waited: number[] = [];
    const base = fakeDispatcher((token) => ({ ok: true, principal: alice, credential: { kind: 'session', token: String(token) } }));
    const dispatcher = { ...base, dispatch: (raw: unknown, conn: ConnectionContext, waitedMs = Number.POSITIVE_INFINITY) => (waited.push(waitedMs), base.dispatch(raw, conn)) };
    const { protocol } = harness({ dispatcher, handshake: 'done', credential: { ok: true, principal: alice, credential: { kind: 'session', token: 'good' } } });
    let id = 0;
    const request = () => protocol.receive(JSON.stringify({ id: ++id, portal: '/p', gate: 'g' }));
    return { protocol, waited, request };
  }

  it('counts from the last read that took all the socket held: unknown before the first', async () => {
    const { protocol, waited, request } = waits();
    protocol.noteRead(80, 0);
    request();
    await sleep(40);
    protocol.noteRead(80, 0);
    request();
    request(); // the same read
    expect(waited[0]).toBe(Number.POSITIVE_INFINITY);
    expect(waited[1]).toBeGreaterThanOrEqual(30);
    expect(waited[1]).toBeLessThan(5000);
    expect(waited[2]).toBe(waited[1]);
  });

  it('goes on counting through reads that may have left data behind: a full read buffer, or a paused socket’s backlog', async () => {
    const { protocol, waited, request } = waits();
    protocol.noteRead(80, 0);
    await sleep(40);
    protocol.noteRead(65_536, 0); // filled the read buffer: more may wait in the socket
    request();
    protocol.noteRead(80, 300); // a paused socket's backlog, emitted as it resumes
    request();
    protocol.noteRead(80, 0); // the last of it
    request();
    protocol.noteRead(80, 0); // everything had been taken by the read before
    request();
    for (const wait of waited.slice(0, 3)) expect(wait).toBeGreaterThanOrEqual(30);
    expect(waited[3]).toBeLessThan(30);
  });

  it('counts requests that waited behind a credential check as of unknown wait', async () => {
    const { protocol, waited } = waits();
    protocol.noteRead(80, 0);
    await sleep(10);
    protocol.noteRead(200, 0);
    protocol.receive('{"type":"auth","token":"good"}');
    protocol.receive('{"id":1,"portal":"/p","gate":"g"}');
    await tick();
    expect(waited).toEqual([Number.POSITIVE_INFINITY]);
  });
});
