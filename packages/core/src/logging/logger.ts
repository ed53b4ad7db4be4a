/**
 * Logging contract. portcullis logs through a {@link LoggerFactory} so an
 * application can route lines to its own logger; the default writes to the console.
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

function consoleLogger(category: string): Logger {
  const write = (level: 'debug' | 'info' | 'warn' | 'error') => (message: string, fields?: Record<string, unknown>) => {
    const line = fields ? `[${category}] ${message} ${JSON.stringify(fields)}` : `[${category}] ${message}`;
    console[level](line);
  };
  return { debug: () => {}, info: write('info'), warn: write('warn'), error: write('error') };
}

/**
 * Writes info, warn and error lines to the console; debug is dropped.
 *
 * @example
 * ```ts
 * registerPortcullis(container, { loggers: consoleLoggerFactory });
 * ```
 */
export const consoleLoggerFactory: LoggerFactory = { create: consoleLogger };

const silent: Logger = { debug() {}, info() {}, warn() {}, error() {} };

/**
 * Drops every line; for tests and embedding.
 *
 * @example
 * ```ts
 * registerPortcullis(container, { config, loggers: silentLoggerFactory }); // tests
 * ```
 */
export const silentLoggerFactory: LoggerFactory = { create: () => silent };
