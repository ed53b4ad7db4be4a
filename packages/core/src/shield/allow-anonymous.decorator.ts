import { decoratedTarget, defineOwnMetadata, describeTarget, ownMetadata, type ClassOrMethodDecorator } from './decorator-target.js';
import { ANONYMOUS_METADATA, SHIELD_METADATA } from './metadata-keys.js';

/**
 * Declares a class (every gate or route of it) or one method open to anyone,
 * whatever `svc:security:shields:fallback` says. It takes the place of a shield in
 * the "nearest wins" rule of `readShieldPlan`: on a method it opens that method
 * of a shielded class; on a class it opens the methods that declare no shield.
 * Written `@AllowAnonymous` or `@AllowAnonymous()`. Every gate and route that
 * answers anonymously is logged once at start-up.
 *
 * @throws TypeError when the same class or method also has a shield.
 * @example
 * ```ts
 * @Portal('/game')
 * class GamePortal {
 *   @AllowAnonymous
 *   @Gate('ping') ping() { return 'pong'; }
 * }
 * ```
 */
export function AllowAnonymous(): ClassOrMethodDecorator;
export function AllowAnonymous(target: object, propertyKey?: string | symbol, descriptor?: PropertyDescriptor): void;
export function AllowAnonymous(target?: object, propertyKey?: string | symbol, descriptor?: PropertyDescriptor): ClassOrMethodDecorator | void {
  if (target === undefined) return (t, key, desc) => record(t, key, desc);
  record(target, propertyKey, descriptor);
}

function record(target: object, key?: string | symbol, descriptor?: PropertyDescriptor): void {
  const where = decoratedTarget('@AllowAnonymous', target, key, descriptor);
  if (ownMetadata(SHIELD_METADATA, where) !== undefined) {
    throw new TypeError(`${describeTarget(target, key)} has a shield and @AllowAnonymous; declare one of them`);
  }
  defineOwnMetadata(ANONYMOUS_METADATA, true, where);
}
