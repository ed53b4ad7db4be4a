import type { DependencyContainer, InjectionToken } from 'tsyringe';

/**
 * The tsyringe container that shields, portals and gates resolve from. Register
 * the container under it once: `container.register(PORTCULLIS_CONTAINER, { useValue: container })`.
 *
 * @example
 * ```ts
 * container.register(PORTCULLIS_CONTAINER, { useValue: container });
 * const enforcer = container.resolve(ShieldEnforcer);
 * ```
 */
export const PORTCULLIS_CONTAINER: InjectionToken<DependencyContainer> = Symbol.for('portcullis:container');
