import 'reflect-metadata';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  AllowAnonymous, Authorize, Gate, JwtAuth, JwtShield, Portal, RateLimit, SessionAuth, SessionShield, type Logger, type LoggerFactory,
} from '@portcullis/core';
import { createMemoryTestStack, type TestStack } from '@portcullis/core/testing';
import { readShieldPlan, type ConnectionContext } from '@portcullis/core/transport';
import { rateLimitClaim, rateLimitSlice, rateLimitWindowOffset } from '../src/shield/rate-limiter.js';

@Portal('/open-world')
class OpenWorld {
  @Gate('time') time() {
    return 'tick';
  }

  @AllowAnonymous
  @Gate('ping') ping() {
    return 'pong';
  }

  @SessionShield
  @Gate('move') move() {
    return 'moved';
  }

  @RateLimit({ limit: 3, windowSeconds: 1 })
  @Gate('shout') shout() {
    return 'heard';
  }

  @AllowAnonymous
  @RateLimit({ limit: 2, windowSeconds: 10, by: 'ip' })
  @Gate('lobby') lobby() {
    return 'lobby';
  }

  @AllowAnonymous
  @RateLimit({ limit: 2, windowSeconds: 10, by: 'connection' })
  @Gate('chat') chat() {
    return 'chat';
  }
}

const conn = (over: Partial<ConnectionContext> = {}): ConnectionContext => ({ clientId: 'c1', transport: 'ws', remoteAddress: '10.0.0.1', credential: undefined, memo: new Map(), ...over });

function capturingLoggers(): LoggerFactory & { lines: Array<{ level: string; message: string; fields?: Record<string, unknown> }> } {
  const lines: Array<{ level: string; message: string; fields?: Record<string, unknown> }> = [];
  const logger = (level: string): Logger['info'] => (message, fields) => void lines.push({ level, message, fields });
  return { lines, create: () => ({ debug: logger('debug'), info: logger('info'), warn: logger('warn'), error: logger('error') }) };
}

describe('the plan of @AllowAnonymous and @RateLimit', () => {
  it('lets the nearest declaration win between a shield and @AllowAnonymous, across classes and overrides', () => {
    @SessionShield
    class Shielded {
      @AllowAnonymous open() {}
      closed() {}
    }
    @AllowAnonymous
    class Open {
      @JwtShield guarded() {}
      plain() {}
    }
    class Sub extends Shielded {
      override open() {}
    }
    expect(readShieldPlan(Shielded, 'open')).toMatchObject({ shield: undefined, anonymous: true, source: 'method' });
    expect(readShieldPlan(Shielded, 'closed')).toMatchObject({ shield: SessionAuth, anonymous: false });
    expect(readShieldPlan(Open, 'guarded')).toMatchObject({ shield: JwtAuth, anonymous: false });
    expect(readShieldPlan(Open, 'plain')).toMatchObject({ shield: undefined, anonymous: true, source: 'class' });
    expect(readShieldPlan(Sub, 'open')).toMatchObject({ shield: undefined, anonymous: true });
    expect(readShieldPlan(Sub, 'closed')).toMatchObject({ shield: SessionAuth });
  });

  it('refuses a shield and @AllowAnonymous on one method, and @Authorize on an anonymous one', () => {
    expect(() => {
      class Both {
        @AllowAnonymous @JwtShield m() {}
      }
      return Both;
    }).toThrow(/has a shield and @AllowAnonymous/);
    expect(() => {
      class Both {
        @JwtShield @AllowAnonymous m() {}
      }
      return Both;
    }).toThrow(/has a shield and @AllowAnonymous/);
    @Authorize({ roles: ['admin'] })
    class Admin {
      @AllowAnonymous m() {}
    }
    expect(() => readShieldPlan(Admin, 'm')).toThrow(/is @AllowAnonymous but an @Authorize applies/);
  });

  it('takes the method\'s @RateLimit over the class\'s, scoped per class and method, and validates the options', () => {
    @RateLimit({ limit: 5, windowSeconds: 60, by: 'ip' })
    class Limited {
      @RateLimit({ limit: 1, windowSeconds: 1 }) tight() {}
      loose() {}
    }
    expect(readShieldPlan(Limited, 'tight').rateLimit).toEqual({ limit: 1, windowSeconds: 1, by: 'principal', scope: 'Limited.tight' });
    expect(readShieldPlan(Limited, 'loose').rateLimit).toEqual({ limit: 5, windowSeconds: 60, by: 'ip', scope: 'Limited.loose' });
    expect(readShieldPlan(OpenWorld, 'time').rateLimit).toBeUndefined();
    for (const bad of [{ limit: 0, windowSeconds: 1 }, { limit: 1.5, windowSeconds: 1 }, { limit: 1, windowSeconds: 0 }, { limit: 1, windowSeconds: 86_401 }, { limit: 1, windowSeconds: 1, by: 'user' }]) {
      expect(() => RateLimit(bad as never)).toThrow(TypeError);
    }
    expect(() => {
      class Twice {
        @RateLimit({ limit: 1, windowSeconds: 1 }) @RateLimit({ limit: 2, windowSeconds: 1 }) m() {}
      }
      return Twice;
    }).toThrow(/already has a @RateLimit/);
  });

  it('claims a tenth of the limit from Redis at a time, at least one', () => {
    expect([1, 9, 10, 20, 1000].map(rateLimitSlice)).toEqual([1, 1, 1, 2, 100]);
  });

  it('sizes later claims by the caller\'s use in the window before, plus a quarter, between a tenth and half of the limit', () => {
    expect([0, 1, 4, 12, 16, 20, 100].map((used) => rateLimitClaim(20, used))).toEqual([2, 2, 5, 10, 10, 10, 10]);
    expect([0, 80, 1000].map((used) => rateLimitClaim(1000, used))).toEqual([100, 100, 500]);
    expect(rateLimitClaim(1, 5)).toBe(1);
  });

  it('shifts each caller\'s windows by an offset in [0, window) that depends only on the rule and the caller', () => {
    const offsets = Array.from({ length: 1000 }, (_, i) => rateLimitWindowOffset(`GamePortal.move\np:player-${i}`, 1000));
    expect(offsets.every((o) => Number.isInteger(o) && o >= 0 && o < 1000)).toBe(true);
    expect(rateLimitWindowOffset('GamePortal.move\np:player-7', 1000)).toBe(offsets[7]);
    // spread: every tenth of the window holds between 5 % and 15 % of 1,000 callers
    for (let tenth = 0; tenth < 10; tenth++) {
      const share = offsets.filter((o) => Math.floor(o / 100) === tenth).length;
      expect(share).toBeGreaterThan(50);
      expect(share).toBeLessThan(150);
    }
  });
});

describe('shields:fallback', () => {
  let stack: TestStack | undefined;
  afterEach(async () => {
    await stack?.close();
    stack = undefined;
  });

  it('none (the default): a gate without a shield answers anyone', async () => {
    stack = await createMemoryTestStack({ portals: [OpenWorld] });
    expect(await stack.dispatcher.dispatch({ id: 1, portal: '/open-world', gate: 'time' }, conn())).toEqual({ id: 1, ok: true, data: 'tick' });
  });

  it('session: a gate without a shield needs a session token; @AllowAnonymous stays open', async () => {
    stack = await createMemoryTestStack({ portals: [OpenWorld], env: { SVC__SECURITY__SHIELDS__FALLBACK: 'session' } });
    const time = { id: 1, portal: '/open-world', gate: 'time' };
    expect(await stack.dispatcher.dispatch(time, conn())).toMatchObject({ ok: false, error: { code: 'unauthorized' } });
    expect(await stack.dispatcher.dispatch(time, conn({ credential: stack.jwt('ann') }))).toMatchObject({ ok: false, error: { code: 'unauthorized' } });
    expect(await stack.dispatcher.dispatch(time, conn({ credential: await stack.session('ann') }))).toEqual({ id: 1, ok: true, data: 'tick' });
    expect(await stack.dispatcher.dispatch({ id: 2, portal: '/open-world', gate: 'ping' }, conn())).toEqual({ id: 2, ok: true, data: 'pong' });
  });

  it('jwt and any: the fallback shield is JwtAuth or either credential', async () => {
    stack = await createMemoryTestStack({ portals: [OpenWorld], env: { SVC__SECURITY__SHIELDS__FALLBACK: 'jwt' } });
    const time = { id: 1, portal: '/open-world', gate: 'time' };
    expect(await stack.dispatcher.dispatch(time, conn({ credential: stack.jwt('bo') }))).toMatchObject({ ok: true });
    expect(await stack.dispatcher.dispatch(time, conn({ credential: await stack.session('bo') }))).toMatchObject({ ok: false, error: { code: 'unauthorized' } });
    await stack.close();
    stack = await createMemoryTestStack({ portals: [OpenWorld], env: { SVC__SECURITY__SHIELDS__FALLBACK: 'any' } });
    expect(await stack.dispatcher.dispatch(time, conn({ credential: stack.jwt('bo') }))).toMatchObject({ ok: true });
    expect(await stack.dispatcher.dispatch(time, conn({ credential: await stack.session('bo') }))).toMatchObject({ ok: true });
    expect(await stack.dispatcher.dispatch(time, conn({ credential: 'forged' }))).toMatchObject({ ok: false, error: { code: 'unauthorized' } });
  });

  it('logs once, in one line, every gate that answers anonymously', async () => {
    const loggers = capturingLoggers();
    stack = await createMemoryTestStack({ portals: [OpenWorld], loggers });
    const announced = loggers.lines.filter((line) => line.message.startsWith('answering anonymously'));
    expect(announced).toHaveLength(1);
    expect(announced[0]!.fields).toEqual({
      anonymous: ['gate /open-world time', 'gate /open-world ping', 'gate /open-world shout', 'gate /open-world lobby', 'gate /open-world chat'],
      fallback: 'none',
    });
    await stack.close();
    const closed = capturingLoggers();
    stack = await createMemoryTestStack({ portals: [OpenWorld], loggers: closed, env: { SVC__SECURITY__SHIELDS__FALLBACK: 'any' } });
    expect(closed.lines.find((line) => line.message.startsWith('answering anonymously'))?.fields).toEqual({
      anonymous: ['gate /open-world ping', 'gate /open-world lobby', 'gate /open-world chat'],
      fallback: 'any',
    });
  });
});

describe('@RateLimit in memory', () => {
  let stack: TestStack;
  afterEach(async () => {
    vi.useRealTimers();
    await stack.close();
  });

  it('answers rate_limited with the time left in the window past the limit, per principal, and again in the next window', async () => {
    // 250 ms into a window of the caller 10.0.0.1, whose windows are shifted by an offset of their own
    const windowStart = 1_700_000_000_000 + rateLimitWindowOffset('OpenWorld.shout\na:10.0.0.1', 1000);
    vi.useFakeTimers({ now: windowStart + 250, toFake: ['Date'] });
    stack = await createMemoryTestStack({ portals: [OpenWorld] });
    const shout = (id: number, over: Partial<ConnectionContext>) => stack.dispatcher.dispatch({ id, portal: '/open-world', gate: 'shout' }, conn(over));
    // anonymous callers on an open gate count by address
    for (let i = 0; i < 3; i++) expect(await shout(i, { clientId: `c${i}` })).toMatchObject({ ok: true });
    expect(await shout(9, { clientId: 'c9' })).toEqual({ id: 9, ok: false, error: { code: 'rate_limited', message: 'too many requests; retry later', retryAfterMs: 750 } });
    expect(await shout(10, { remoteAddress: '10.0.0.2' })).toMatchObject({ ok: true });
    vi.setSystemTime(windowStart + 1000);
    expect(await shout(11, {})).toMatchObject({ ok: true });
  });

  it('counts by principal on a shielded gate, by address with by: ip, by connection with by: connection', async () => {
    @Portal('/limited')
    class Limited {
      @SessionShield
      @RateLimit({ limit: 2, windowSeconds: 60 })
      @Gate('move') move() {
        return 'moved';
      }
    }
    stack = await createMemoryTestStack({ portals: [Limited, OpenWorld] });
    const ann = await stack.session('ann');
    const move = (id: number, over: Partial<ConnectionContext>) => stack.dispatcher.dispatch({ id, portal: '/limited', gate: 'move' }, conn(over));
    expect(await move(1, { credential: ann, remoteAddress: '1.1.1.1' })).toMatchObject({ ok: true });
    expect(await move(2, { credential: ann, remoteAddress: '2.2.2.2', clientId: 'other' })).toMatchObject({ ok: true });
    expect(await move(3, { credential: ann })).toMatchObject({ ok: false, error: { code: 'rate_limited' } });
    expect(await move(4, { credential: await stack.session('bo') })).toMatchObject({ ok: true });
    // a refused credential is answered by the shield and not counted
    expect(await move(5, { credential: 'forged' })).toMatchObject({ ok: false, error: { code: 'unauthorized' } });

    const lobby = (id: number, over: Partial<ConnectionContext>) => stack.dispatcher.dispatch({ id, portal: '/open-world', gate: 'lobby' }, conn(over));
    expect(await lobby(1, { clientId: 'a' })).toMatchObject({ ok: true });
    expect(await lobby(2, { clientId: 'b', credential: ann })).toMatchObject({ ok: true });
    expect(await lobby(3, { clientId: 'c' })).toMatchObject({ ok: false, error: { code: 'rate_limited' } });

    const chat = (id: number, clientId: string) => stack.dispatcher.dispatch({ id, portal: '/open-world', gate: 'chat' }, conn({ clientId }));
    expect([await chat(1, 'x'), await chat(2, 'x'), await chat(3, 'x'), await chat(4, 'y')].map((r) => r.ok)).toEqual([true, true, false, true]);
  });
});
