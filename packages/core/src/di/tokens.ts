import type { InjectionToken } from 'tsyringe';
import type { PortcullisConfig } from '../config/portcullis-config.js';
import type { SigningKey } from '../key/key-guard.js';
import type { LoggerFactory } from '../logging/logger.js';

/**
 * Injection tokens for the values portcullis registers in a tsyringe container.
 * Classes are their own tokens; these name the interfaces.
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
