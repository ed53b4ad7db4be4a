import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { inject, injectable } from 'tsyringe';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createShieldFixture, UNREACHABLE_REDIS, type ShieldFixture } from '../../test/support/shield-fixture.js';
import type { AuthContext, ShieldResult } from '../contracts/auth-context.js';
import type { ShieldAuth } from '../contracts/shield-auth.js';
import { Authorize } from './authorize.decorator.js';
import { JwtShield } from './jwt-shield.decorator.js';
import { SessionShield } from './session-shield.decorator.js';
import { ShieldEnforcer } from './shield-enforcer.js';
import { RateLimit } from './rate-limit.decorator.js';
import { readShieldPlan } from './shield-plan-reader.js';
import { Shield } from './shield.decorator.js';

const API_KEYS = Symbol('api-keys');

interface ApiKeyDirectory {
  owner(key: string): string | undefined;
}

@injectable()
class ApiKeyAuth implements ShieldAuth {
  static instances = 0;
  constructor(@inject(API_KEYS) private readonly keys: ApiKeyDirectory) {
    ApiKeyAuth.instances++;
  }

  authenticate(ctx: AuthContext): ShieldResult {
    if (ctx.credential === 'banned-key') return { ok: false, code: 'forbidden', message: 'this key is suspended' };
    // More than a refusal has: only the code and the message count.
    if (ctx.credential === 'vault-down') return { ok: false, code: 'unavailable', message: 'key vault down', retryAfterMs: 1, principal: { id: 'x' } } as ShieldResult;
    const owner = ctx.credential === undefined ? undefined : this.keys.owner(ctx.credential);
    return owner ? { ok: true, principal: { id: owner, name: undefined, roles: ['bot'], claims: {}, via: 'custom' } } : { ok: false, code: 'unauthorized' };
  }
}

class ExplodingAuth implements ShieldAuth {
  authenticate(): ShieldResult {
    throw new Error('connect ECONNREFUSED redis://:hunter2@10.0.0.9:6379');
  }
}

/** A principal whose roles are not a list (a buggy custom shield). */
const badRolesPrincipal = { ok: true, principal: { id: 'x', name: undefined, roles: 5, claims: {}, via: 'custom' } } as never;

class BadRolesAuth implements ShieldAuth {
  authenticate(): ShieldResult {
    return badRolesPrincipal;
  }
}

class BadRolesLaterAuth implements ShieldAuth {
  async authenticate(): Promise<ShieldResult> {
    return badRolesPrincipal;
  }
}

class RejectingAuth implements ShieldAuth {
  async authenticate(): Promise<ShieldResult> {
    throw new Error('connect ECONNREFUSED redis://:hunter2@10.0.0.9:6379');
  }
}

/** A shield with a cache it can answer from at once and keeps warm for shed requests, and ones whose keepWarm fails. */
class WarmingAuth implements ShieldAuth {
  static warmed: Array<string | undefined> = [];
  authenticate(ctx: AuthContext): ShieldResult {
    return ctx.credential === 'key-1' ? { ok: true, principal: { id: 'warm-1', name: undefined, roles: [], claims: {}, via: 'custom' } } : { ok: false, code: 'unauthorized' };
  }
  peek(ctx: AuthContext): ShieldResult {
    return this.authenticate(ctx);
  }
  keepWarm(ctx: AuthContext): void {
    WarmingAuth.warmed.push(ctx.credential);
  }
}

class ThrowingWarmAuth extends WarmingAuth {
  override keepWarm(): void {
    throw new Error('connect ECONNREFUSED redis://:hunter2@10.0.0.9:6379');
  }
}

class RejectingWarmAuth extends WarmingAuth {
  // A shield author may well write it async; its rejection must not go unhandled.
  override keepWarm(): void {
    return Promise.reject(new Error('connect ECONNREFUSED redis://:hunter2@10.0.0.9:6379')) as never;
  }
}

/** A shield that answers later, as one backed by a database would. */
class LaterAuth implements ShieldAuth {
  static asked = 0;
  async authenticate(ctx: AuthContext): Promise<ShieldResult> {
    LaterAuth.asked++;
    await new Promise((resolve) => setImmediate(resolve));
    return ctx.credential === 'later-key'
      ? { ok: true, principal: { id: 'later-1', name: undefined, roles: [], claims: {}, via: 'custom' } }
      : { ok: false, code: 'unauthorized' };
  }
}

/** A shield that answers later and keeps a cache, empty here: peek starts filling it and cannot tell yet. */
class CachingLaterAuth extends LaterAuth {
  static peeked = 0;
  peek(): undefined {
    CachingLaterAuth.peeked++;
    return undefined;
  }
}

/** A shield whose peek answers with a promise, against the contract, and that promise fails. */
class RejectingLaterAuth extends RejectingAuth {
  peek(): ShieldResult {
    return this.authenticate() as never;
  }
}

/** A shield written before `peek`: a cache it keeps warm, and an answer at once, but no `peek`. */
class KeepWarmOnlyAuth implements ShieldAuth {
  static asked = 0;
  authenticate(): ShieldResult {
    KeepWarmOnlyAuth.asked++;
    return { ok: true, principal: { id: 'kw-1', name: undefined, roles: [], claims: {}, via: 'custom' } };
  }
  keepWarm(): void {}
}

class SloppyAuth implements ShieldAuth {
  authenticate(): ShieldResult {
    return { ok: true } as never;
  }
}

@injectable()
class NeedsUnregisteredToken implements ShieldAuth {
  constructor(@inject(Symbol('nowhere')) readonly missing: unknown) {}
  authenticate(): ShieldResult {
    return { ok: false, code: 'unauthorized' };
  }
}

class Api {
  open(): void {}
  @JwtShield jwt(): void {}
  @SessionShield session(): void {}
  @Authorize({ roles: ['admin'] }) admin(): void {}
  @Authorize() anyone(): void {}
  @Shield(ApiKeyAuth) bots(): void {}
  @Shield(ApiKeyAuth) @Authorize({ roles: ['admin'] }) adminBots(): void {}
  @Shield(ExplodingAuth) exploding(): void {}
  @Shield(SloppyAuth) sloppy(): void {}
  @Shield(RejectingAuth) rejecting(): void {}
  @Shield(BadRolesAuth) @Authorize({ roles: ['admin'] }) badRoles(): void {}
  @Shield(BadRolesLaterAuth) @Authorize({ roles: ['admin'] }) badRolesLater(): void {}
  @Shield(LaterAuth) later(): void {}
  @Shield(CachingLaterAuth) @RateLimit({ limit: 1, windowSeconds: 60, by: 'connection' }) cachingLater(): void {}
  @Shield(RejectingLaterAuth) rejectingLater(): void {}
  @Shield(NeedsUnregisteredToken) broken(): void {}
  @Shield(WarmingAuth) @RateLimit({ limit: 1, windowSeconds: 60, by: 'connection' }) warming(): void {}
  @Shield(ThrowingWarmAuth) throwingWarm(): void {}
  @Shield(RejectingWarmAuth) rejectingWarm(): void {}
  @Shield(KeepWarmOnlyAuth) keepWarmOnly(): void {}
}

@Authorize({ roles: ['moderator', 'admin'] })
class Moderation {
  @Authorize({ roles: ['verified'] }) ban(): void {}
}

let fx: ShieldFixture;
let enforcer: ShieldEnforcer;
const ctx = (credential?: string): AuthContext => ({ transport: 'http', credential, clientId: 'r1', remoteAddress: '127.0.0.1' });
const plan = (method: keyof Api) => readShieldPlan(Api, method);

beforeEach(async () => {
  fx = await createShieldFixture();
  fx.container.register(API_KEYS, { useValue: { owner: (key: string) => (key === 'bot-key' ? 'bot-1' : undefined) } });
  enforcer = fx.container.resolve(ShieldEnforcer);
});

afterEach(async () => {
  await fx.close();
});

describe('ShieldEnforcer', () => {
  it('lets anyone through an open plan, with no principal', async () => {
    expect(await enforcer.enforce(plan('open'), ctx())).toEqual({ ok: true, principal: undefined });
  });

  it('enforces JwtAuth and SessionAuth, each refusing the other credential kind', async () => {
    const jwt = fx.jwt('p1');
    const session = await fx.session('p2');
    expect(await enforcer.enforce(plan('jwt'), ctx(jwt))).toMatchObject({ ok: true, principal: { id: 'p1', via: 'jwt' } });
    expect(await enforcer.enforce(plan('jwt'), ctx(session))).toMatchObject({ ok: false, code: 'unauthorized' });
    expect(await enforcer.enforce(plan('session'), ctx(session))).toMatchObject({ ok: true, principal: { id: 'p2', via: 'session' } });
    expect(await enforcer.enforce(plan('session'), ctx(fx.jwt('p1')))).toMatchObject({ ok: false, code: 'unauthorized' });
    expect(await enforcer.enforce(plan('session'), ctx())).toMatchObject({ ok: false, code: 'unauthorized' });
  });

  it('authenticates @Authorize without a shield with a JWT and checks roles', async () => {
    expect(await enforcer.enforce(plan('anyone'), ctx(fx.jwt('p1')))).toMatchObject({ ok: true, principal: { id: 'p1' } });
    expect(await enforcer.enforce(plan('anyone'), ctx())).toMatchObject({ ok: false, code: 'unauthorized' });
    expect(await enforcer.enforce(plan('admin'), ctx(fx.jwt('p1', { role: 'admin' })))).toMatchObject({ ok: true });
    expect(await enforcer.enforce(plan('admin'), ctx(fx.jwt('p1', { roles: ['player'] })))).toEqual({
      ok: false,
      code: 'forbidden',
      message: 'the principal is not allowed here',
    });
  });

  it('requires one role of each applicable @Authorize', async () => {
    const ban = readShieldPlan(Moderation, 'ban');
    expect(await enforcer.enforce(ban, ctx(fx.jwt('m', { roles: ['moderator', 'verified'] })))).toMatchObject({ ok: true });
    expect(await enforcer.enforce(ban, ctx(fx.jwt('m', { roles: ['admin', 'verified'] })))).toMatchObject({ ok: true });
    expect(await enforcer.enforce(ban, ctx(fx.jwt('m', { roles: ['moderator'] })))).toMatchObject({ ok: false, code: 'forbidden' });
    expect(await enforcer.enforce(ban, ctx(fx.jwt('m', { roles: ['verified'] })))).toMatchObject({ ok: false, code: 'forbidden' });
  });

  it('resolves a custom shield through the container with its injected service, once', async () => {
    const before = ApiKeyAuth.instances;
    expect(await enforcer.enforce(plan('bots'), ctx('bot-key'))).toMatchObject({ ok: true, principal: { id: 'bot-1', via: 'custom' } });
    expect(await enforcer.enforce(plan('bots'), ctx('other-key'))).toMatchObject({ ok: false, code: 'unauthorized' });
    expect(await enforcer.enforce(plan('bots'), ctx('banned-key'))).toEqual({ ok: false, code: 'forbidden', message: 'this key is suspended' });
    // Its own message on the fixed refusal: unavailable's retry hint stays, nothing else comes through.
    expect(await enforcer.enforce(plan('bots'), ctx('vault-down'))).toEqual({ ok: false, code: 'unavailable', message: 'key vault down', retryAfterMs: 1000 });
    expect(await enforcer.enforce(plan('adminBots'), ctx('bot-key'))).toMatchObject({ ok: false, code: 'forbidden' });
    expect(ApiKeyAuth.instances - before).toBe(1);
  });

  it('fails closed with unavailable when a shield throws, logging no detail of the error', async () => {
    const verdict = await enforcer.enforce(plan('exploding'), ctx('anything'));
    expect(verdict).toEqual({ ok: false, code: 'unavailable', message: 'authentication is temporarily unavailable', retryAfterMs: 1000 });
    expect(fx.logs.some((line) => line.level === 'error' && line.fields?.shield === 'ExplodingAuth')).toBe(true);
    expect(JSON.stringify(fx.logs)).not.toContain('hunter2');
  });

  it('decide() answers at once for a shield that answered at once, else a promise; both fail closed', async () => {
    expect(enforcer.decide(plan('bots'), ctx('bot-key'))).toMatchObject({ ok: true, principal: { id: 'bot-1' } });
    expect(enforcer.decide(plan('jwt'), ctx(fx.jwt('p1')))).toMatchObject({ ok: true, principal: { id: 'p1' } });
    expect(enforcer.decide(plan('exploding'), ctx('x'))).toMatchObject({ ok: false, code: 'unavailable' });
    const later = enforcer.decide(plan('later'), ctx('later-key'));
    expect(later).toBeInstanceOf(Promise);
    expect(await later).toMatchObject({ ok: true, principal: { id: 'later-1' } });
    expect(await enforcer.decide(plan('later'), ctx('nope'))).toMatchObject({ ok: false, code: 'unauthorized' });
    const rejecting = enforcer.decide(plan('rejecting'), ctx('x'));
    expect(rejecting).toBeInstanceOf(Promise);
    expect(await rejecting).toEqual({ ok: false, code: 'unavailable', message: 'authentication is temporarily unavailable', retryAfterMs: 1000 });
    expect(fx.logs.some((line) => line.fields?.shield === 'RejectingAuth')).toBe(true);
    expect(JSON.stringify(fx.logs)).not.toContain('hunter2');
  });

  it('fails closed when a shield answers something that is not a ShieldResult', async () => {
    expect(await enforcer.enforce(plan('sloppy'), ctx('x'))).toMatchObject({ ok: false, code: 'unavailable' });
    expect(enforcer.decide(plan('badRoles'), ctx('x'))).toMatchObject({ ok: false, code: 'unavailable' });
    expect(await enforcer.decide(plan('badRolesLater'), ctx('x'))).toMatchObject({ ok: false, code: 'unavailable' });
  });

  it('answers unavailable when the session store is down', async () => {
    const down = await createShieldFixture(UNREACHABLE_REDIS, { waitForStore: false });
    try {
      const downEnforcer = down.container.resolve(ShieldEnforcer);
      expect(await downEnforcer.enforce(plan('session'), ctx(`${randomUUID()};session`))).toMatchObject({ ok: false, code: 'unavailable' });
      expect(await downEnforcer.enforce(plan('jwt'), ctx(down.jwt('p1')))).toMatchObject({ ok: false, code: 'unavailable' });
    } finally {
      await down.close();
    }
  });

  it('reports a shield that cannot be resolved at prepare time', () => {
    expect(() => enforcer.prepare(plan('broken'))).toThrow();
    expect(() => enforcer.prepare(plan('jwt'))).not.toThrow();
  });

  it('answers the memoized result object itself on a connection (no per-message allocation)', async () => {
    const memo = new Map();
    const session = await fx.session('p2');
    const connection: AuthContext = { transport: 'ws', credential: session, clientId: 'c', remoteAddress: undefined, memo };
    const first = await enforcer.enforce(plan('session'), connection);
    expect(await enforcer.enforce(plan('session'), connection)).toBe(first);
  });
});

describe('ShieldEnforcer.decideAtOnce (a server that is behind)', () => {
  it('gives the verdict decide gives when a caching shield answers at once, rate limit counted', () => {
    expect(enforcer.decideAtOnce(plan('warming'), ctx('key-1'))).toMatchObject({ ok: true, principal: { id: 'warm-1' } });
    expect(enforcer.decideAtOnce(plan('warming'), ctx('key-1'))).toMatchObject({ ok: false, code: 'rate_limited' });
    expect(enforcer.decideAtOnce(plan('warming'), ctx('key-2'))).toMatchObject({ ok: false, code: 'unauthorized' });
    expect(enforcer.decideAtOnce(plan('open'), ctx())).toEqual({ ok: true, principal: undefined });
  });

  it('answers undefined when the shield would wait, asks it only to peek, and counts nothing against the rate limit', async () => {
    CachingLaterAuth.peeked = 0;
    LaterAuth.asked = 0;
    expect(enforcer.decideAtOnce(plan('cachingLater'), ctx('later-key'))).toBeUndefined();
    expect(enforcer.decideAtOnce(plan('cachingLater'), ctx('later-key'))).toBeUndefined();
    expect(CachingLaterAuth.peeked).toBe(2); // peek is where the shield starts filling its cache
    expect(LaterAuth.asked).toBe(0); // authenticate, whose answer would come later, was not called
    // The limit of one per window was not touched: the first decision passes, the second is the one over it.
    expect(await enforcer.enforce(plan('cachingLater'), ctx('later-key'))).toMatchObject({ ok: true, principal: { id: 'later-1' } });
    expect(await enforcer.enforce(plan('cachingLater'), ctx('later-key'))).toMatchObject({ ok: false, code: 'rate_limited' });
  });

  it('does not ask a shield without peek: its lookup would be made for a refusal', () => {
    LaterAuth.asked = 0;
    KeepWarmOnlyAuth.asked = 0;
    expect(enforcer.decideAtOnce(plan('later'), ctx('later-key'))).toBeUndefined();
    expect(enforcer.decideAtOnce(plan('exploding'), ctx('k'))).toBeUndefined();
    // keepWarm alone is no longer taken to mean "authenticate answers at once".
    expect(enforcer.decideAtOnce(plan('keepWarmOnly'), ctx('k'))).toBeUndefined();
    expect(LaterAuth.asked).toBe(0);
    expect(KeepWarmOnlyAuth.asked).toBe(0);
  });

  it('never throws: a peek that answers a promise gets no verdict, and its rejection is logged once, without a secret', async () => {
    for (let i = 0; i < 3; i++) expect(enforcer.decideAtOnce(plan('rejectingLater'), ctx('k'))).toBeUndefined();
    await new Promise((resolve) => setImmediate(resolve));
    expect(fx.logs.filter((line) => line.message === 'shield peek answered a promise that failed; ignored')).toHaveLength(1);
    expect(JSON.stringify(fx.logs)).not.toContain('hunter2');
  });
});

describe('ShieldEnforcer.keepWarm (a shed request)', () => {
  it("calls the shield's keepWarm with the request's context, and decides and counts nothing", async () => {
    WarmingAuth.warmed = [];
    enforcer.keepWarm(plan('warming'), ctx('key-1'));
    enforcer.keepWarm(plan('warming'), ctx('key-1'));
    expect(WarmingAuth.warmed).toEqual(['key-1', 'key-1']);
    // The rate limit of one per window was counted by neither: the first decision passes, the second is the one over it.
    expect(await enforcer.enforce(plan('warming'), ctx('key-1'))).toMatchObject({ ok: true, principal: { id: 'warm-1' } });
    expect(await enforcer.enforce(plan('warming'), ctx('key-1'))).toMatchObject({ ok: false, code: 'rate_limited' });
    enforcer.keepWarm(plan('open'), ctx('key-1')); // an open plan has no shield to ask
    expect(WarmingAuth.warmed).toHaveLength(2);
  });

  it('never throws: a keepWarm that throws or rejects is logged once, without its detail leaking a secret', async () => {
    for (let i = 0; i < 3; i++) {
      expect(() => enforcer.keepWarm(plan('throwingWarm'), ctx('k'))).not.toThrow();
      enforcer.keepWarm(plan('rejectingWarm'), ctx('k'));
    }
    await new Promise((resolve) => setImmediate(resolve));
    const lines = fx.logs.filter((line) => line.message === 'shield keepWarm failed; ignored');
    expect(lines).toHaveLength(1); // throttled: one line per 10 s
    expect(JSON.stringify(fx.logs)).not.toContain('hunter2');
  });
});
