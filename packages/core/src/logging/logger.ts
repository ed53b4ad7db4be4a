/**
 * The loggers portcullis ships: the console one (the default) and a silent one.
 * Applications route lines to their own logger through the `LoggerFactory` contract.
 */
import type { Logger, LoggerFactory } from '../contracts/logger.js';

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
