import 'reflect-metadata';
import { describe, expect, it } from 'vitest';
import type { AuthContext, ShieldResult } from '../contracts/auth-context.js';
import type { ShieldAuth } from '../contracts/shield-auth.js';
import { Authorize } from './authorize.decorator.js';
import { JwtAuth } from './jwt-auth.js';
import { JwtShield } from './jwt-shield.decorator.js';
import { SessionAuth } from './session-auth.js';
import { SessionShield } from './session-shield.decorator.js';
import { readShieldPlan } from './shield-plan-reader.js';
import { Shield } from './shield.decorator.js';
import { NeverShed } from './never-shed.decorator.js';

class KeyAuth implements ShieldAuth {
  authenticate(_ctx: AuthContext): ShieldResult {
    return { ok: false, code: 'unauthorized' };
  }
}

@SessionShield
class GamePortal {
  move(): void {}
  @JwtShield
  whoami(): void {}
  @Authorize({ roles: ['admin'] })
  kick(): void {}
}

class Unshielded {
  ping(): void {}
  @Shield(KeyAuth)
  secret(): void {}
  @Authorize()
  me(): void {}
}

describe('readShieldPlan: class and method', () => {
  it('applies the class shield to undecorated methods', () => {
    expect(readShieldPlan(GamePortal, 'move')).toEqual({ shield: SessionAuth, source: 'class', roleSets: [], authorize: false, anonymous: false, neverShed: false });
  });

  it("lets a method's shield replace the class's", () => {
    expect(readShieldPlan(GamePortal, 'whoami')).toMatchObject({ shield: JwtAuth, source: 'method' });
  });

  it("keeps the class's shield for a method that only adds @Authorize, and adds its roles", () => {
    expect(readShieldPlan(GamePortal, 'kick')).toEqual({ shield: SessionAuth, source: 'class', roleSets: [['admin']], authorize: true, anonymous: false, neverShed: false });
  });

  it('leaves unshielded methods of an unshielded class open', () => {
    expect(readShieldPlan(Unshielded, 'ping')).toEqual({ shield: undefined, source: 'none', roleSets: [], authorize: false, anonymous: false, neverShed: false });
    expect(readShieldPlan(Unshielded, 'secret').shield).toBe(KeyAuth);
  });

  it('authenticates @Authorize without any shield with JwtAuth', () => {
    expect(readShieldPlan(Unshielded, 'me')).toEqual({ shield: JwtAuth, source: 'authorize', roleSets: [], authorize: true, anonymous: false, neverShed: false });
  });

  it('requires every @Authorize of class and method (AND); roles inside one are alternatives (OR)', () => {
    @Authorize({ roles: ['player'] })
    class Guild {
      @Authorize({ roles: ['officer', 'leader'] })
      @Authorize({ roles: ['verified'] })
      disband(): void {}
    }
    const plan = readShieldPlan(Guild, 'disband');
    expect(plan.shield).toBe(JwtAuth);
    expect(plan.roleSets).toHaveLength(3);
    expect(plan.roleSets).toEqual(expect.arrayContaining([['player'], ['officer', 'leader'], ['verified']]));
  });

  it('caches one frozen plan per (class, method)', () => {
    const plan = readShieldPlan(GamePortal, 'move');
    expect(readShieldPlan(GamePortal, 'move')).toBe(plan);
    expect(Object.isFrozen(plan)).toBe(true);
    expect(() => readShieldPlan('GamePortal' as never, 'move')).toThrow(TypeError);
  });
});

describe('readShieldPlan: subclasses', () => {
  @JwtShield
  @Authorize({ roles: ['staff'] })
  class BaseController {
    list(): void {}
    @Shield(KeyAuth)
    export(): void {}
    @Authorize({ roles: ['auditor'] })
    audit(): void {}
  }

  class PlainChild extends BaseController {
    override list(): void {}
  }

  @SessionShield
  class SessionChild extends BaseController {
    @Authorize({ roles: ['lead'] })
    override audit(): void {}
    own(): void {}
  }

  it("inherits the parent's class shield and roles when the subclass declares none", () => {
    expect(readShieldPlan(PlainChild, 'list')).toEqual({ shield: JwtAuth, source: 'class', roleSets: [['staff']], authorize: true, anonymous: false, neverShed: false });
  });

  it("keeps an overridden method's decorators when the override has none", () => {
    expect(readShieldPlan(PlainChild, 'export').shield).toBe(KeyAuth);
    expect(readShieldPlan(PlainChild, 'audit').roleSets).toEqual([['staff'], ['auditor']]);
  });

  it("replaces the parent's class shield with the subclass's own", () => {
    expect(readShieldPlan(SessionChild, 'own')).toMatchObject({ shield: SessionAuth, source: 'class' });
    expect(readShieldPlan(SessionChild, 'list')).toMatchObject({ shield: SessionAuth, source: 'class' });
  });

  it("still prefers an inherited method shield over the subclass's class shield", () => {
    expect(readShieldPlan(SessionChild, 'export')).toMatchObject({ shield: KeyAuth, source: 'method' });
  });

  it('adds the roles of an override to those of the method it overrides and of every class', () => {
    expect(readShieldPlan(SessionChild, 'audit').roleSets).toEqual([['staff'], ['lead'], ['auditor']]);
  });

  it('does not leak a subclass decoration into the parent', () => {
    expect(readShieldPlan(BaseController, 'own')).toMatchObject({ shield: JwtAuth, source: 'class' });
    expect(readShieldPlan(BaseController, 'audit').roleSets).toEqual([['staff'], ['auditor']]);
  });
});

describe('readShieldPlan: @NeverShed', () => {
  class Moderation {
    @NeverShed
    @SessionShield
    ban(): void {}
    @SessionShield
    mute(): void {}
  }
  class LaterModeration extends Moderation {
    override ban(): void {}
  }
  @NeverShed()
  class Revocations {
    @JwtShield
    logout(): void {}
  }
  class MoreRevocations extends Revocations {
    @SessionShield
    endAll(): void {}
  }

  it('marks the method, an override of it, every method of a marked class and of its subclasses, and nothing else', () => {
    expect(readShieldPlan(Moderation, 'ban').neverShed).toBe(true);
    expect(readShieldPlan(Moderation, 'mute').neverShed).toBe(false);
    expect(readShieldPlan(LaterModeration, 'ban').neverShed).toBe(true);
    expect(readShieldPlan(Revocations, 'logout').neverShed).toBe(true);
    expect(readShieldPlan(MoreRevocations, 'endAll').neverShed).toBe(true);
  });

  it('decorates only a class or an instance method', () => {
    expect(() => NeverShed({}, 'field', { value: 1 })).toThrow(TypeError);
    expect(() => NeverShed({})).toThrow(TypeError);
  });
});
