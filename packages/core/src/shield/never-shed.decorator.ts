import { decoratedTarget, defineOwnMetadata, type ClassOrMethodDecorator } from './decorator-target.js';
import { NEVER_SHED_METADATA } from './metadata-keys.js';

/**
 * Keeps a gate or route answering while the event loop is behind, where it would be
 * refused `overloaded` unrun (see `GateDispatcher.shedWhenBehind` and the express option
 * `shedWhenBehind`): its shield is decided and its handler runs, however long it waited.
 * On a method it marks that gate or route; on a class, every one of the class. Subclasses
 * inherit it, and an override of a marked method stays marked. Put it on what revokes:
 * refusing a logout, a ban or an account deletion for load keeps alive a credential its
 * owner (or your moderators) want ended, for as long as anyone can keep the server
 * saturated. portcullis marks the guarded routes of `JwtAuthController` (logout and the
 * session routes). Written `@NeverShed` or `@NeverShed()`; read into the `ShieldPlan`.
 *
 * @throws TypeError when the target is neither a class nor an instance method.
 * @example
 * ```ts
 * @Portal('/admin')
 * class ModerationPortal {
 *   @NeverShed
 *   @SessionShield
 *   @Authorize({ roles: ['moderator'] })
 *   @Gate('ban')
 *   async ban(data: { playerId: string }) { await sessions.revokeAllFor(data.playerId); }
 * }
 * ```
 */
export function NeverShed(): ClassOrMethodDecorator;
export function NeverShed(target: object, propertyKey?: string | symbol, descriptor?: PropertyDescriptor): void;
export function NeverShed(target?: object, propertyKey?: string | symbol, descriptor?: PropertyDescriptor): ClassOrMethodDecorator | void {
  if (target === undefined) return (t, key, desc) => record(t, key, desc);
  record(target, propertyKey, descriptor);
}

function record(target: object, key?: string | symbol, descriptor?: PropertyDescriptor): void {
  defineOwnMetadata(NEVER_SHED_METADATA, true, decoratedTarget('@NeverShed', target, key, descriptor));
}
