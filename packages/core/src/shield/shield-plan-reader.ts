import 'reflect-metadata';
import type { AuthorizeRequirement } from './authorize.decorator.js';
import { JwtAuth } from './jwt-auth.js';
import { AUTHORIZE_METADATA, SHIELD_METADATA } from './metadata-keys.js';
import type { ShieldClass } from './shield.decorator.js';

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
}

const plans = new WeakMap<Function, Map<string | symbol, ShieldPlan>>();

/**
 * Merges the shield metadata of a class and one of its methods. The rule:
 *
 * - **Shield: the nearest wins.** The method's `@Shield` (declared on it or on the
 *   method it overrides) replaces the class's; otherwise the class's shield applies,
 *   declared on the class or inherited from the nearest base class that has one.
 *   An override without decorators keeps the decorators of the method it overrides.
 * - **Authorize: all must hold.** Every `@Authorize` on the class, its base classes,
 *   the method and the methods it overrides applies; roles inside one `@Authorize`
 *   are alternatives (any of them), separate `@Authorize`s add up (all of them).
 * - `@Authorize` without any shield authenticates with `JwtAuth`.
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
  return Object.freeze({ shield, source: 'direct', roleSets: NO_ROLES, authorize: false });
}

const NO_ROLES: ShieldPlan['roleSets'] = Object.freeze([]);

function mergePlan(target: Function, method: string | symbol): ShieldPlan {
  const methodShield: ShieldClass | undefined = Reflect.getMetadata(SHIELD_METADATA, target.prototype, method);
  const classShield: ShieldClass | undefined = Reflect.getMetadata(SHIELD_METADATA, target);
  const requirements = [...classRequirements(target), ...methodRequirements(target.prototype, method)];
  const authorize = requirements.length > 0;
  const roleSets = Object.freeze(requirements.filter((r) => r.roles.length > 0).map((r) => r.roles));
  if (methodShield) return Object.freeze({ shield: methodShield, source: 'method', roleSets, authorize });
  if (classShield) return Object.freeze({ shield: classShield, source: 'class', roleSets, authorize });
  if (authorize) return Object.freeze({ shield: JwtAuth, source: 'authorize', roleSets, authorize });
  return Object.freeze({ shield: undefined, source: 'none', roleSets, authorize });
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
