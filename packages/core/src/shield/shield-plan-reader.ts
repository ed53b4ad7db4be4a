import 'reflect-metadata';
import type { AuthorizeRequirement } from './authorize.decorator.js';
import { JwtAuth } from './jwt-auth.js';
import { describeTarget } from './decorator-target.js';
import { ANONYMOUS_METADATA, AUTHORIZE_METADATA, NEVER_SHED_METADATA, RATE_LIMIT_METADATA, SHIELD_METADATA } from './metadata-keys.js';
import type { RateLimitRule } from './rate-limit.decorator.js';
import type { ShieldClass } from './shield.decorator.js';

/**
 * A plan's `@RateLimit` with the scope its counters are kept under: `Class.method`,
 * the same on every server that runs the same code.
 *
 * @example
 * ```ts
 * readShieldPlan(GamePortal, 'move').rateLimit; // { limit: 20, windowSeconds: 1, by: 'principal', scope: 'GamePortal.move' }
 * ```
 */
export interface PlannedRateLimit extends RateLimitRule {
  readonly scope: string;
}

/**
 * What protects one gate or route, merged once from its class and method
 * metadata. Frozen; `ShieldEnforcer.enforce` runs it per request.
 *
 * @example
 * ```ts
 * const plan: ShieldPlan = readShieldPlan(GamePortal, 'move');
 * plan.shield === SessionAuth; // true for a @SessionShield gate
 * ```
 */
export interface ShieldPlan {
  /** The shield to run, or undefined when the gate or route is open. */
  readonly shield: ShieldClass | undefined;
  /** Where the shield came from: `authorize` means `@Authorize` alone, so `JwtAuth`; `direct` a plan made by {@link shieldPlan}. */
  readonly source: 'method' | 'class' | 'authorize' | 'direct' | 'none';
  /** Role sets from every applicable `@Authorize` with roles: each needs one of its roles, all must hold. */
  readonly roleSets: readonly (readonly string[])[];
  /** True when at least one `@Authorize` applies (an authenticated principal is required). */
  readonly authorize: boolean;
  /**
   * True when the nearest declaration is `@AllowAnonymous`: no shield, and the
   * `shields:fallback` setting does not apply.
   */
  readonly anonymous: boolean;
  /** The `@RateLimit` that applies (the method's, else the class's), if any. */
  readonly rateLimit: PlannedRateLimit | undefined;
  /** True when `@NeverShed` marks the method, a method it overrides, the class or a base class: never refused for load. */
  readonly neverShed: boolean;
}

const plans = new WeakMap<Function, Map<string | symbol, ShieldPlan>>();

/**
 * Merges the shield metadata of a class and one of its methods. The rule:
 *
 * - **Shield: the nearest wins.** The method's `@Shield` (declared on it or on the
 *   method it overrides) replaces the class's; otherwise the class's shield applies,
 *   declared on the class or inherited from the nearest base class that has one.
 *   An override without decorators keeps the decorators of the method it overrides.
 *   `@AllowAnonymous` counts as a shield declaration here: the nearest of the two wins,
 *   and a plan without either is guarded by `shields:fallback` (see `ShieldEnforcer`).
 * - **RateLimit: the nearest wins**, by the same rule: the method's, else the class's.
 * - **Authorize: all must hold.** Every `@Authorize` on the class, its base classes,
 *   the method and the methods it overrides applies; roles inside one `@Authorize`
 *   are alternatives (any of them), separate `@Authorize`s add up (all of them).
 * - `@Authorize` without any shield authenticates with `JwtAuth`; `@Authorize` on an
 *   anonymous method is a contradiction and throws.
 * - **NeverShed: any mark holds**, on the method, a method it overrides, the class or a
 *   base class.
 *
 * Plans are cached per (class, method): read once per route or gate, never per message.
 *
 * @example
 * ```ts
 * const plan = readShieldPlan(GamePortal, 'move');
 * const verdict = await enforcer.enforce(plan, ctx);
 * ```
 */
export function readShieldPlan(target: Function, method: string | symbol): ShieldPlan {
  if (typeof target !== 'function') throw new TypeError('readShieldPlan(target, method) expects the decorated class');
  let byMethod = plans.get(target);
  if (!byMethod) plans.set(target, (byMethod = new Map()));
  let plan = byMethod.get(method);
  if (!plan) byMethod.set(method, (plan = mergePlan(target, method)));
  return plan;
}

/**
 * A plan that runs one shield and asks for no role: for a check outside a
 * decorated gate or route, decided by the same enforcer (a connection's
 * credential, the JWT an upgrade presents).
 *
 * @example
 * ```ts
 * const verdict = await enforcer.decide(shieldPlan(JwtAuth), ctx);
 * ```
 */
export function shieldPlan(shield: ShieldClass): ShieldPlan {
  return Object.freeze({ shield, source: 'direct', roleSets: NO_ROLES, authorize: false, anonymous: false, rateLimit: undefined, neverShed: false });
}

const NO_ROLES: ShieldPlan['roleSets'] = Object.freeze([]);

type Declared = { readonly shield: ShieldClass } | { readonly anonymous: true } | undefined;

function mergePlan(target: Function, method: string | symbol): ShieldPlan {
  const methodDeclared = nearestMethod(target.prototype, method, declaredShield);
  const classDeclared = nearestClass(target, declaredShield);
  const requirements = [...classRequirements(target), ...methodRequirements(target.prototype, method)];
  const authorize = requirements.length > 0;
  const roleSets = Object.freeze(requirements.filter((r) => r.roles.length > 0).map((r) => r.roles));
  const rule = nearestMethod<RateLimitRule>(target.prototype, method, ownRule) ?? nearestClass<RateLimitRule>(target, ownRule);
  const rateLimit = rule && Object.freeze({ ...rule, scope: describeTarget(target, method) });
  const neverShed = (nearestMethod(target.prototype, method, ownNeverShed) ?? nearestClass(target, ownNeverShed)) === true;
  const declared = methodDeclared ?? classDeclared;
  const source = methodDeclared ? 'method' : classDeclared ? 'class' : authorize ? 'authorize' : 'none';
  if (declared && 'anonymous' in declared) {
    if (authorize) throw new TypeError(`${describeTarget(target, method)} is @AllowAnonymous but an @Authorize applies to it; declare one of them`);
    return Object.freeze({ shield: undefined, source, roleSets, authorize, anonymous: true, rateLimit, neverShed });
  }
  const shield = declared?.shield ?? (authorize ? JwtAuth : undefined);
  return Object.freeze({ shield, source, roleSets, authorize, anonymous: false, rateLimit, neverShed });
}

function declaredShield(target: object, method?: string | symbol): Declared {
  const shield: ShieldClass | undefined = method === undefined ? Reflect.getOwnMetadata(SHIELD_METADATA, target) : Reflect.getOwnMetadata(SHIELD_METADATA, target, method);
  if (shield) return { shield };
  const anonymous = method === undefined ? Reflect.getOwnMetadata(ANONYMOUS_METADATA, target) : Reflect.getOwnMetadata(ANONYMOUS_METADATA, target, method);
  return anonymous === true ? { anonymous: true } : undefined;
}

function ownNeverShed(target: object, method?: string | symbol): true | undefined {
  const marked = method === undefined ? Reflect.getOwnMetadata(NEVER_SHED_METADATA, target) : Reflect.getOwnMetadata(NEVER_SHED_METADATA, target, method);
  return marked === true ? true : undefined;
}

function ownRule(target: object, method?: string | symbol): RateLimitRule | undefined {
  return method === undefined ? Reflect.getOwnMetadata(RATE_LIMIT_METADATA, target) : Reflect.getOwnMetadata(RATE_LIMIT_METADATA, target, method);
}

/** The first declaration found on the method or the methods it overrides. */
function nearestMethod<T>(prototype: object | undefined, method: string | symbol, read: (p: object, method: string | symbol) => T | undefined): T | undefined {
  for (let p: object | null | undefined = prototype; p && p !== Object.prototype; p = Object.getPrototypeOf(p)) {
    const found = read(p, method);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** The first declaration found on the class or its base classes. */
function nearestClass<T>(target: Function, read: (c: Function) => T | undefined): T | undefined {
  for (let c: Function | null = target; c && c !== Function.prototype; c = Object.getPrototypeOf(c)) {
    const found = read(c);
    if (found !== undefined) return found;
  }
  return undefined;
}

function classRequirements(target: Function): AuthorizeRequirement[] {
  const found: AuthorizeRequirement[] = [];
  for (let c: Function | null = target; c && c !== Function.prototype; c = Object.getPrototypeOf(c)) {
    found.push(...((Reflect.getOwnMetadata(AUTHORIZE_METADATA, c) as AuthorizeRequirement[] | undefined) ?? []));
  }
  return found;
}

function methodRequirements(prototype: object | undefined, method: string | symbol): AuthorizeRequirement[] {
  const found: AuthorizeRequirement[] = [];
  for (let p: object | null | undefined = prototype; p && p !== Object.prototype; p = Object.getPrototypeOf(p)) {
    found.push(...((Reflect.getOwnMetadata(AUTHORIZE_METADATA, p, method) as AuthorizeRequirement[] | undefined) ?? []));
  }
  return found;
}
