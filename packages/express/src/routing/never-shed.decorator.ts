import 'reflect-metadata';

/** On a class, or on a prototype with a method key: the route (or every route of the class) is never shed. */
const NEVER_SHED_METADATA = Symbol.for('portcullis:express:never-shed');

/**
 * Keeps a guarded route answering while the event loop is behind, where it would be
 * refused 503 `overloaded` (see `shedWhenBehind`). On a method it marks that route; on a
 * class, every route of the class. Subclasses inherit it, and an override of a marked method
 * stays marked. Put it on routes that revoke:
 * refusing a logout, a ban or an account deletion for load keeps alive a credential its
 * owner (or your moderators) want ended, for as long as anyone can keep the server
 * saturated. portcullis marks the guarded routes of `JwtAuthController` (logout and the
 * session routes). Only records metadata; `mountControllers` reads it.
 *
 * @throws TypeError when the target is neither a class nor an instance method.
 * @example
 * ```ts
 * @Controller('/admin')
 * class ModerationController {
 *   @NeverShed
 *   @SessionShield
 *   @Authorize({ roles: ['moderator'] })
 *   @Post('/ban/:id')
 *   async ban(req: Request) { await sessions.revokeAllFor(String(req.params.id)); }
 * }
 * ```
 */
export function NeverShed(target: object, handler?: string | symbol, descriptor?: PropertyDescriptor): void {
  if (handler === undefined) {
    if (typeof target !== 'function') throw new TypeError('@NeverShed decorates a controller class or a route method');
    Reflect.defineMetadata(NEVER_SHED_METADATA, true, target);
    return;
  }
  if (typeof target === 'function' || typeof descriptor?.value !== 'function') throw new TypeError('@NeverShed decorates a controller class or a route method');
  Reflect.defineMetadata(NEVER_SHED_METADATA, true, target, handler);
}

/** Whether `@NeverShed` marks the route `handler` of `controller`, on the method or the class (its own or inherited). */
export function isNeverShed(controller: Function, handler: string | symbol): boolean {
  return Reflect.getMetadata(NEVER_SHED_METADATA, controller) === true || Reflect.getMetadata(NEVER_SHED_METADATA, controller.prototype as object, handler) === true;
}
