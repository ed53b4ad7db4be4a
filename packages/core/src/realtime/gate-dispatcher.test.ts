import 'reflect-metadata';
import { encodeReply } from '@portcullis/protocol';
import { injectable } from 'tsyringe';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createShieldFixture, type ShieldFixture } from '../../test/support/shield-fixture.js';
import type { AuthContext } from '../contracts/auth-context.js';
import { OverloadedError, PortcullisError } from '../errors/portcullis-error.js';
import { Authorize } from '../shield/authorize.decorator.js';
import { JwtShield } from '../shield/jwt-shield.decorator.js';
import { SessionShield } from '../shield/session-shield.decorator.js';
import type { ConnectionContext, GateContext } from './connection-context.js';
import { GateDispatcher } from './gate-dispatcher.js';
import { Gate } from './gate.decorator.js';
import { Portal } from './portal.decorator.js';

@injectable()
class MoveLog {
  readonly moves: string[] = [];
}

@Portal('/game')
@injectable()
class GamePortal {
  constructor(private readonly log: MoveLog) {}

  @Gate('ping') ping(): string {
    return 'pong';
  }

  @SessionShield
  @Gate('move')
  move(data: { x: number; y: number }, clientId: string, ctx: GateContext): unknown {
    this.log.moves.push(clientId);
    return { x: data.x, y: data.y, by: ctx.principal?.id };
  }

  @JwtShield()
  @Gate('whoami')
  whoami(_data: unknown, _clientId: string, ctx: GateContext): unknown {
    return ctx.principal?.id;
  }

  @Authorize({ roles: ['admin'] })
  @Gate('kick')
  kick(): string {
    return 'kicked';
  }

  @Gate('context') context(data: unknown, clientId: string, ctx: GateContext): unknown {
    const { transport, remoteAddress, portal, gate, principal } = ctx;
    return { data, clientId, transport, remoteAddress, portal, gate, principal: principal ?? null };
  }

  @Gate('nothing') nothing(): void {}

  @Gate('boom') boom(): never {
    throw new Error('secret detail: password hunter2');
  }

  @Gate('async-boom') async asyncBoom(): Promise<never> {
    throw new Error('secret detail: password hunter2');
  }

  @Gate('bigint') bigint(): bigint {
    return 10n;
  }

  @Gate('store-down') async storeDown(): Promise<never> {
    throw new PortcullisError('unavailable', 'redis at 10.0.0.3 refused password hunter2');
  }

  @Gate('too-busy') tooBusy(): never {
    throw new OverloadedError('matches', 3);
  }

  @Gate('host-only') hostOnly(): never {
    throw new PortcullisError('forbidden', 'only the host hunter2 may start');
  }

  @Gate('taken') taken(): never {
    throw new PortcullisError('conflict', 'name hunter2 is taken');
  }
}

@Portal('/empty')
class NoGates {}

let fx: ShieldFixture;
let dispatcher: GateDispatcher;
const conn = (credential?: string, extra: Partial<ConnectionContext> = {}): ConnectionContext => ({
  clientId: 'client-1',
  transport: 'ws',
  remoteAddress: '10.0.0.7',
  credential,
  memo: new Map(),
  ...extra,
});
const request = (gate: string, data?: unknown, id = 1) => ({ id, portal: '/game', gate, data });

beforeEach(async () => {
  fx = await createShieldFixture();
  fx.container.registerSingleton(MoveLog);
  dispatcher = fx.container.resolve(GateDispatcher).register(GamePortal);
});

afterEach(async () => {
  vi.restoreAllMocks();
  await fx.close();
});

describe('GateDispatcher: routing and replies', () => {
  it('answers an unshielded gate for an anonymous connection', async () => {
    expect(await dispatcher.dispatch(request('ping', undefined, 7), conn())).toEqual({ id: 7, ok: true, data: 'pong' });
  });

  it('passes data, client id and the gate context to the handler, and resolves the portal through DI', async () => {
    const token = await fx.session('player-9');
    const reply = await dispatcher.dispatch(request('move', { x: 1, y: 2 }), conn(token));
    expect(reply).toEqual({ id: 1, ok: true, data: { x: 1, y: 2, by: 'player-9' } });
    expect(fx.container.resolve(MoveLog).moves).toEqual(['client-1']);
    expect(await dispatcher.dispatch(request('context', [1]), conn(undefined, { transport: 'tcp' }))).toEqual({
      id: 1,
      ok: true,
      data: { data: [1], clientId: 'client-1', transport: 'tcp', remoteAddress: '10.0.0.7', portal: '/game', gate: 'context', principal: null },
    });
  });

  it('answers null data when the handler returns nothing, and keeps any numeric id', async () => {
    expect(await dispatcher.dispatch(request('nothing', undefined, 0), conn())).toEqual({ id: 0, ok: true, data: null });
    expect(await dispatcher.dispatch(request('ping', undefined, -2.5), conn())).toMatchObject({ id: -2.5, ok: true });
  });

  it('answers not_found for an unknown portal or gate', async () => {
    expect(await dispatcher.dispatch({ id: 3, portal: '/nope', gate: 'ping' }, conn())).toMatchObject({ id: 3, ok: false, error: { code: 'not_found' } });
    expect(await dispatcher.dispatch(request('fly', undefined, 4), conn())).toMatchObject({ id: 4, ok: false, error: { code: 'not_found' } });
  });

  it('answers bad_request with id null for frames that are not request objects or lack a numeric id', async () => {
    for (const raw of ['text', 42, null, undefined, [1, 2], { portal: '/game', gate: 'ping' }, { id: '1', portal: '/game', gate: 'ping' }, { id: Number.NaN, portal: '/game', gate: 'ping' }]) {
      expect(await dispatcher.dispatch(raw, conn())).toEqual({ id: null, ok: false, error: { code: 'bad_request', message: expect.any(String) } });
    }
  });

  it('answers bad_request with the id when portal or gate is not a string', async () => {
    expect(await dispatcher.dispatch({ id: 5, portal: '/game' }, conn())).toMatchObject({ id: 5, ok: false, error: { code: 'bad_request' } });
    expect(await dispatcher.dispatch({ id: 6, portal: 1, gate: 'ping' }, conn())).toMatchObject({ id: 6, ok: false, error: { code: 'bad_request' } });
  });

  it('answers internal when a handler throws or rejects, leaking nothing and logging no message', async () => {
    for (const gate of ['boom', 'async-boom']) {
      const reply = await dispatcher.dispatch(request(gate, undefined, 8), conn());
      expect(reply).toEqual({ id: 8, ok: false, error: { code: 'internal', message: 'the gate failed' } });
    }
    const logged = fx.logs.filter((line) => line.level === 'error' && line.fields?.gate === 'boom');
    expect(logged).toHaveLength(1);
    expect(JSON.stringify(fx.logs)).not.toContain('hunter2');
  });

  it("answers a handler's PortcullisError with its code when replies carry that code, with the code's fixed message and its retry hint", async () => {
    expect(await dispatcher.dispatch(request('store-down', undefined, 13), conn())).toEqual({
      id: 13,
      ok: false,
      error: { code: 'unavailable', message: 'authentication is temporarily unavailable', retryAfterMs: 1000 },
    });
    expect(await dispatcher.dispatch(request('too-busy', undefined, 15), conn())).toEqual({
      id: 15,
      ok: false,
      error: { code: 'overloaded', message: expect.any(String), retryAfterMs: 3000 },
    });
    expect(await dispatcher.dispatch(request('host-only', undefined, 14), conn())).toEqual({
      id: 14,
      ok: false,
      error: { code: 'forbidden', message: 'the principal is not allowed here' },
    });
    expect(await dispatcher.dispatch(request('taken', undefined, 15), conn())).toEqual({ id: 15, ok: false, error: { code: 'internal', message: 'the gate failed' } });
    expect(fx.logs.filter((line) => line.level === 'error' && line.fields?.gate === 'taken')).toHaveLength(1);
    expect(fx.logs.some((line) => line.level === 'error' && line.fields?.gate === 'store-down')).toBe(false);
    expect(JSON.stringify(fx.logs)).not.toContain('hunter2');
  });

  it('answers at once, without a promise, when the shield and the handler are synchronous; a promise only when one of them waits', async () => {
    const session = await fx.session('p-sync');
    const connection = conn(session);
    await dispatcher.dispatch(request('move', { x: 0, y: 0 }), connection); // the first message may read the store
    const moved = dispatcher.dispatch(request('move', { x: 1, y: 2 }, 3), connection);
    expect(moved).not.toBeInstanceOf(Promise);
    expect(moved).toEqual({ id: 3, ok: true, data: { x: 1, y: 2, by: 'p-sync' } });
    expect(dispatcher.dispatch(request('ping', undefined, 4), conn())).toEqual({ id: 4, ok: true, data: 'pong' });
    expect(dispatcher.dispatch(request('boom', undefined, 5), conn())).toEqual({ id: 5, ok: false, error: { code: 'internal', message: 'the gate failed' } });
    expect(dispatcher.dispatch(request('nope', undefined, 6), conn())).toEqual({ id: 6, ok: false, error: { code: 'not_found', message: expect.any(String) } });
    const waited = dispatcher.dispatch(request('async-boom', undefined, 7), conn());
    expect(waited).toBeInstanceOf(Promise);
    expect(await waited).toEqual({ id: 7, ok: false, error: { code: 'internal', message: 'the gate failed' } });
  });

  it('turns a result JSON cannot carry into an internal reply when encoded', async () => {
    const reply = await dispatcher.dispatch(request('bigint', undefined, 9), conn());
    expect(JSON.parse(encodeReply(reply))).toEqual({ id: 9, ok: false, error: { code: 'internal', message: 'the gate failed' } });
  });
});

describe('GateDispatcher: shields per message', () => {
  it('answers unauthorized on a session gate without a session, or with a JWT', async () => {
    expect(await dispatcher.dispatch(request('move', { x: 0, y: 0 }), conn())).toMatchObject({ ok: false, error: { code: 'unauthorized' } });
    expect(await dispatcher.dispatch(request('move', { x: 0, y: 0 }), conn(fx.jwt('p')))).toMatchObject({ ok: false, error: { code: 'unauthorized' } });
  });

  it('answers unauthorized on a JWT gate with a session token, and the principal with a JWT', async () => {
    expect(await dispatcher.dispatch(request('whoami'), conn(await fx.session('p')))).toMatchObject({ ok: false, error: { code: 'unauthorized' } });
    expect(await dispatcher.dispatch(request('whoami'), conn(fx.jwt('p-jwt')))).toEqual({ id: 1, ok: true, data: 'p-jwt' });
  });

  it('answers forbidden when a role is missing', async () => {
    expect(await dispatcher.dispatch(request('kick'), conn(fx.jwt('p', { role: 'player' })))).toMatchObject({ ok: false, error: { code: 'forbidden' } });
    expect(await dispatcher.dispatch(request('kick'), conn(fx.jwt('p', { role: 'admin' })))).toMatchObject({ ok: true, data: 'kicked' });
  });

  it('refuses a revoked session at its next message on the same connection', async () => {
    const connection = conn(await fx.session('p'));
    expect((await dispatcher.dispatch(request('move', { x: 1, y: 1 }), connection)).ok).toBe(true);
    await fx.sessions.revoke(connection.credential!);
    expect(await dispatcher.dispatch(request('move', { x: 1, y: 1 }), connection)).toMatchObject({ ok: false, error: { code: 'unauthorized' } });
  });

  it('answers unavailable, retry after a second, when the session store is down', async () => {
    const token = await fx.session('p');
    vi.spyOn(fx.sessions, 'peek').mockReturnValue(undefined);
    vi.spyOn(fx.sessions, 'validate').mockRejectedValue(new PortcullisError('unavailable', 'down'));
    expect(await dispatcher.dispatch(request('move', { x: 1, y: 1 }, 11), conn(token))).toEqual({
      id: 11,
      ok: false,
      error: { code: 'unavailable', message: 'authentication is temporarily unavailable', retryAfterMs: 1000 },
    });
  });

  it("reads the credential from each request's token field when the connection says so (UDP)", async () => {
    const udp = conn(undefined, { transport: 'udp', tokenInFrame: true });
    const token = await fx.session('udp-player');
    expect(await dispatcher.dispatch({ ...request('move', { x: 3, y: 4 }), token }, udp)).toMatchObject({ ok: true, data: { by: 'udp-player' } });
    expect(await dispatcher.dispatch(request('move', { x: 3, y: 4 }), udp)).toMatchObject({ ok: false, error: { code: 'unauthorized' } });
  });
});

describe('GateDispatcher: JSON text', () => {
  it('parses text and bytes the same way, and answers bad JSON with bad_request and id null', async () => {
    const text = JSON.stringify(request('ping', undefined, 12));
    expect(await dispatcher.dispatchText(text, conn())).toEqual({ id: 12, ok: true, data: 'pong' });
    expect(await dispatcher.dispatchText(new TextEncoder().encode(text), conn())).toEqual({ id: 12, ok: true, data: 'pong' });
    for (const bad of ['{"id": 1,', '', 'null', new Uint8Array([0xff, 0xfe])]) {
      expect(await dispatcher.dispatchText(bad, conn())).toMatchObject({ id: null, ok: false, error: { code: 'bad_request' } });
    }
  });
});

describe('GateDispatcher: registration', () => {
  it('refuses a class without @Portal, a portal without gates, and a path registered twice', () => {
    class Plain {}
    expect(() => fx.container.resolve(GateDispatcher).register(Plain)).toThrow(/not a portal/);
    expect(() => fx.container.resolve(GateDispatcher).register(NoGates)).toThrow(/no @Gate/);
    expect(() => dispatcher.register(GamePortal)).toThrow(/registered twice/);
  });

  it('serves gates inherited from a base portal, with the base shields', async () => {
    @Portal('/arena')
    @injectable()
    class ArenaPortal extends GamePortal {
      override ping(): string {
        return 'arena-pong';
      }
    }
    const arena = fx.container.resolve(GateDispatcher).register(ArenaPortal);
    expect(await arena.dispatch({ id: 1, portal: '/arena', gate: 'ping' }, conn())).toMatchObject({ ok: true, data: 'arena-pong' });
    expect(await arena.dispatch({ id: 2, portal: '/arena', gate: 'move', data: {} }, conn())).toMatchObject({ ok: false, error: { code: 'unauthorized' } });
  });
});

describe('GateDispatcher.admit: a connection credential decided by the enforcer', () => {
  const admit = (credential: unknown, extra: Partial<AuthContext> = {}) =>
    dispatcher.admit({ transport: 'ws', credential: credential as string, clientId: 'c', remoteAddress: undefined, ...extra });

  it('accepts a session token and a JWT, naming the credential it accepted, and refuses anything else', async () => {
    const pair = fx.issuer.issueLoginPair('p-jwt');
    const session = await fx.session('p-s');
    expect(await admit(session)).toMatchObject({ ok: true, principal: { id: 'p-s' }, credential: { kind: 'session', token: session } });
    expect(await admit(pair.accessToken)).toMatchObject({ ok: true, principal: { id: 'p-jwt' }, credential: { kind: 'jwt', token: pair.accessToken, jti: pair.accessJti } });
    for (const token of ['', 'garbage', 42, {}, pair.refreshToken, '3b241101-e2bb-4255-8caf-4136c566a962;session']) {
      expect(await admit(token)).toMatchObject({ ok: false, code: 'unauthorized' });
    }
  });

  it('refuses an upgraded JWT and answers unavailable when the store is down', async () => {
    const jwt = fx.jwt('p');
    await fx.sessions.upgrade(jwt);
    expect(await admit(jwt)).toMatchObject({ ok: false, code: 'unauthorized' });
    vi.spyOn(fx.sessions, 'isJwtInvalidated').mockRejectedValue(new PortcullisError('unavailable', 'down'));
    vi.spyOn(fx.sessions, 'isJwtInvalidatedNow').mockReturnValue(undefined);
    expect(await admit(fx.jwt('p'))).toMatchObject({ ok: false, code: 'unavailable' });
  });

  it('warms the connection memo so the first gated message needs no store read', async () => {
    const memo = new Map();
    const token = await fx.session('p');
    await admit(token, { memo });
    const validate = vi.spyOn(fx.sessions, 'validate');
    expect(await dispatcher.dispatch(request('move', { x: 1, y: 1 }), conn(token, { memo }))).toMatchObject({ ok: true });
    expect(validate).not.toHaveBeenCalled();
  });
});
