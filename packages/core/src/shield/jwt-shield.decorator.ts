import type { ClassOrMethodDecorator } from './decorator-target.js';
import { JwtAuth } from './jwt-auth.js';
import { Shield } from './shield.decorator.js';

/**
 * `@Shield(JwtAuth)`: only requests with a valid, not invalidated JWT access token
 * reach the handler. Written `@JwtShield` or `@JwtShield()`, on a class or a method.
 *
 * @example
 * ```ts
 * @Controller('/api')
 * class MeController {
 *   @JwtShield
 *   @Get('/me') me(req: ShieldedRequest) { return { id: req.principal.id }; }
 * }
 * ```
 */
export function JwtShield(): ClassOrMethodDecorator;
export function JwtShield(target: object, propertyKey?: string | symbol, descriptor?: PropertyDescriptor): void;
export function JwtShield(target?: object, propertyKey?: string | symbol, descriptor?: PropertyDescriptor): ClassOrMethodDecorator | void {
  const decorate = Shield(JwtAuth);
  if (target === undefined) return decorate;
  decorate(target, propertyKey, descriptor);
}
