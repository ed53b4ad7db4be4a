import 'reflect-metadata';
import { describeTarget } from '../shield/decorator-target.js';
import { GATE_METADATA, GATE_METHODS_METADATA, PORTAL_METADATA } from '../shield/metadata-keys.js';
import { readShieldPlan, type ShieldPlan } from '../shield/shield-plan-reader.js';

/**
 * One gate of a portal: its name, the method that handles it, and its merged shield plan.
 *
 * @example
 * ```ts
 * for (const { name, plan } of readPortalPlan(GamePortal).gates) console.log(name, plan.source);
 * ```
 */
export interface GateRoute {
  readonly name: string;
  readonly method: string | symbol;
  readonly plan: ShieldPlan;
}

/**
 * A portal class read once: its path and every gate, including inherited ones.
 *
 * @example
 * ```ts
 * const { path, gates }: PortalPlan = readPortalPlan(GamePortal); // '/game', [ping, move, whoami]
 * ```
 */
export interface PortalPlan {
  readonly path: string;
  readonly gates: readonly GateRoute[];
}

/**
 * Reads a `@Portal` class: its path and its `@Gate` methods (declared on it or
 * inherited; an override without decorators keeps the gate), each with the shield
 * plan of {@link readShieldPlan}.
 *
 * @throws TypeError when the class has no `@Portal`, no gates, or two methods share a gate name.
 * @example
 * ```ts
 * const { path, gates } = readPortalPlan(GamePortal); // '/game', [{ name: 'move', ... }]
 * ```
 */
export function readPortalPlan(portal: Function): PortalPlan {
  const path: string | undefined = typeof portal === 'function' ? Reflect.getMetadata(PORTAL_METADATA, portal) : undefined;
  if (path === undefined) throw new TypeError(`${describeTarget(Object(portal))} is not a portal; decorate it with @Portal('/path')`);
  const gates: GateRoute[] = [];
  const byName = new Map<string, string | symbol>();
  for (const method of gateMethods(portal.prototype)) {
    const name: string = Reflect.getMetadata(GATE_METADATA, portal.prototype, method);
    const taken = byName.get(name);
    if (taken !== undefined) {
      throw new TypeError(`${describeTarget(portal)} has two methods for gate "${name}": ${String(taken)} and ${String(method)}`);
    }
    byName.set(name, method);
    gates.push(Object.freeze({ name, method, plan: readShieldPlan(portal, method) }));
  }
  if (gates.length === 0) throw new TypeError(`${describeTarget(portal)} has no @Gate methods`);
  return Object.freeze({ path, gates: Object.freeze(gates) });
}

function gateMethods(prototype: object): Set<string | symbol> {
  const methods = new Set<string | symbol>();
  for (let p: object | null = prototype; p && p !== Object.prototype; p = Object.getPrototypeOf(p)) {
    for (const key of (Reflect.getOwnMetadata(GATE_METHODS_METADATA, p) as readonly (string | symbol)[] | undefined) ?? []) {
      methods.add(key);
    }
  }
  return methods;
}
