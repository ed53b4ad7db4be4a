import type { ShieldAuth } from '../contracts/shield-auth.js';
import { decoratedTarget, defineOwnMetadata, describeTarget, ownMetadata, type ClassOrMethodDecorator } from './decorator-target.js';
import { ANONYMOUS_METADATA, SHIELD_METADATA } from './metadata-keys.js';

/**
 * A class implementing {@link ShieldAuth}; resolved through tsyringe, so it may inject services.
 *
 * @example
 * ```ts
 * const shields: ShieldClass[] = [JwtAuth, SessionAuth, ApiKeyAuth];
 * ```
 */
export type ShieldClass = new (...args: any[]) => ShieldAuth;

/**
 * Protects a class (every gate or route of it) or a single method with a shield.
 * Only records metadata; `readShieldPlan` merges it and `ShieldEnforcer` enforces
 * it. A method's shield replaces its class's shield; one shield per class or method.
 *
 * @throws TypeError when `auth` is not a class, or the target already has a shield or `@AllowAnonymous`.
 * @example
 * ```ts
 * @Portal('/game')
 * class GamePortal {
 *   @Shield(ApiKeyAuth)
 *   @Gate('admin-say') say(data: unknown) { ... }
 * }
 * ```
 */
export function Shield(auth: ShieldClass): ClassOrMethodDecorator {
  if (typeof auth !== 'function' || typeof auth.prototype !== 'object' || auth.prototype === null) {
    throw new TypeError('@Shield(AuthClass) expects a class implementing ShieldAuth, e.g. @Shield(JwtAuth)');
  }
  return (target, propertyKey, descriptor) => {
    const where = decoratedTarget('@Shield', target, propertyKey, descriptor);
    if (ownMetadata(SHIELD_METADATA, where) !== undefined) {
      throw new TypeError(`${describeTarget(target, propertyKey)} already has a shield; put one shield per class or method`);
    }
    if (ownMetadata(ANONYMOUS_METADATA, where) !== undefined) {
      throw new TypeError(`${describeTarget(target, propertyKey)} has a shield and @AllowAnonymous; declare one of them`);
    }
    defineOwnMetadata(SHIELD_METADATA, auth, where);
  };
}
