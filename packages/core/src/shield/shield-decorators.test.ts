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

class OpenAuth implements ShieldAuth {
  authenticate(_ctx: AuthContext): ShieldResult {
    return { ok: false, code: 'unauthorized' };
  }
}

describe('@Shield', () => {
  it('refuses an argument that is not a class', () => {
    expect(() => Shield(undefined as never)).toThrow(TypeError);
    expect(() => Shield('JwtAuth' as never)).toThrow(/expects a class/);
    expect(() => Shield((() => undefined) as never)).toThrow(/expects a class/);
    expect(() => Shield(new OpenAuth() as never)).toThrow(/expects a class/);
  });

  it('refuses a second shield on the same class or method', () => {
    expect(() => {
      @Shield(OpenAuth)
      @JwtShield
      class Twice {}
      return Twice;
    }).toThrow(/already has a shield/);
    expect(() => {
      class TwiceOnMethod {
        @SessionShield
        @Shield(OpenAuth)
        handle(): void {}
      }
      return TwiceOnMethod;
    }).toThrow(/TwiceOnMethod.handle already has a shield/);
  });

  it('refuses static methods', () => {
    expect(() => {
      class Statics {
        @JwtShield
        static handle(): void {}
      }
      return Statics;
    }).toThrow(/static method Statics.handle/);
  });
});

describe('@JwtShield and @SessionShield spellings', () => {
  it('accepts @JwtShield and @JwtShield() alike, on classes and methods', () => {
    @JwtShield
    class Bare {
      @SessionShield()
      called(): void {}
      plain(): void {}
    }
    @JwtShield()
    class Called {
      @SessionShield
      bare(): void {}
    }
    expect(readShieldPlan(Bare, 'plain').shield).toBe(JwtAuth);
    expect(readShieldPlan(Called, 'other').shield).toBe(JwtAuth);
    expect(readShieldPlan(Bare, 'called').shield).toBe(SessionAuth);
    expect(readShieldPlan(Called, 'bare').shield).toBe(SessionAuth);
  });
});

describe('@Authorize', () => {
  it('accepts @Authorize, @Authorize() and @Authorize({ roles })', () => {
    @Authorize
    class A {
      @Authorize()
      m(): void {}
      @Authorize({ roles: ['admin', 'mod'] })
      n(): void {}
    }
    expect(readShieldPlan(A, 'm')).toMatchObject({ authorize: true, roleSets: [] });
    expect(readShieldPlan(A, 'n')).toMatchObject({ authorize: true, roleSets: [['admin', 'mod']] });
  });

  it('refuses roles that are not a non-empty array of non-empty strings', () => {
    expect(() => Authorize({ roles: [] })).toThrow(/non-empty array/);
    expect(() => Authorize({ roles: 'admin' as never })).toThrow(TypeError);
    expect(() => Authorize({ roles: ['admin', ''] })).toThrow(TypeError);
    expect(() => Authorize({ roles: [42 as never] })).toThrow(TypeError);
    expect(() => Authorize('admin' as never)).toThrow(/expects \{ roles/);
  });

  it('keeps the declared roles from later mutation of the argument', () => {
    const roles = ['admin'];
    class B {
      @Authorize({ roles })
      m(): void {}
    }
    roles.push('anyone');
    expect(readShieldPlan(B, 'm').roleSets).toEqual([['admin']]);
  });
});
