/**
 * The logging contract. portcullis logs through a {@link LoggerFactory} so an
 * application can route lines to its own logger.
 */

/**
 * A category logger. Lines never contain tokens, passwords, hashes or keys.
 *
 * @example
 * ```ts
 * const log: Logger = loggers.create('game');
 * log.info('player joined', { id: principal.id });
 * ```
 */
export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

/**
 * Makes category loggers.
 *
 * @example
 * ```ts
 * const log = consoleLoggerFactory.create('portcullis:auth');
 * log.warn('development key in use');
 * ```
 */
export interface LoggerFactory {
  create(category: string): Logger;
}
