/**
 * The injection tokens of the values portcullis registers in a tsyringe
 * container. Classes are their own tokens; these name the interfaces.
 */
import type { DependencyContainer, InjectionToken } from 'tsyringe';
import type { LoggerFactory } from './logger.js';
import type { PortcullisConfig } from './portcullis-config.js';
import type { SigningKey } from './signing-key.js';

/**
 * Injection token of the validated {@link PortcullisConfig}.
 *
 * @example
 * ```ts
 * @injectable()
 * class Motd { constructor(@inject(PORTCULLIS_CONFIG) readonly config: PortcullisConfig) {} }
 * ```
 */
export const PORTCULLIS_CONFIG: InjectionToken<PortcullisConfig> = Symbol.for('portcullis:config');

/**
 * Injection token of the {@link SigningKey}, registered after the key guard ran.
 *
 * @example
 * ```ts
 * const { keyObject } = container.resolve(SIGNING_KEY);
 * ```
 */
export const SIGNING_KEY: InjectionToken<SigningKey> = Symbol.for('portcullis:signing-key');

/**
 * Injection token of the {@link LoggerFactory} portcullis logs through.
 *
 * @example
 * ```ts
 * container.register(LOGGER_FACTORY, { useValue: { create: (category) => pinoLogger.child({ category }) } });
 * ```
 */
export const LOGGER_FACTORY: InjectionToken<LoggerFactory> = Symbol.for('portcullis:logger-factory');

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
