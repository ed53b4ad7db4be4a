import type { ClassOrMethodDecorator } from './decorator-target.js';
import { SessionAuth } from './session-auth.js';
import { Shield } from './shield.decorator.js';

/**
 * `@Shield(SessionAuth)`: only requests with a live session token reach the
 * handler. Written `@SessionShield` or `@SessionShield()`, on a class or a method.
 *
 * @example
 * ```ts
 * @Portal('/game')
 * class GamePortal {
 *   @SessionShield
 *   @Gate('move') move(data: { x: number; y: number }, clientId: string, ctx: GateContext) { ... }
 * }
 * ```
 */
export function SessionShield(): ClassOrMethodDecorator;
export function SessionShield(target: object, propertyKey?: string | symbol, descriptor?: PropertyDescriptor): void;
export function SessionShield(target?: object, propertyKey?: string | symbol, descriptor?: PropertyDescriptor): ClassOrMethodDecorator | void {
  const decorate = Shield(SessionAuth);
  if (target === undefined) return decorate;
  decorate(target, propertyKey, descriptor);
}
