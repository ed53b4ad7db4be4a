import { DEFAULT_MAX_FRAME_BYTES, type ConnectionRegistry, type GateDispatcher, type LoggerFactory } from '@portcullis/core';

/**
 * Options of {@link createTcpTransport}. Only `dispatcher` is required.
 *
 * @example
 * ```ts
 * const options: TcpTransportOptions = { dispatcher, registry, authTimeoutMs: 2000 };
 * ```
 */
export interface TcpTransportOptions {
  /** Routes requests to gates and checks credentials (`@portcullis/core`). */
  readonly dispatcher: GateDispatcher;
  /** Tracks connections so a revocation closes them and pushes reach them. Strongly recommended. */
  readonly registry?: ConnectionRegistry;
  /** Largest frame body in bytes; a larger length prefix closes the connection. Default 64 KiB. */
  readonly maxFrameBytes?: number;
  /** The auth frame must arrive within this time after connect. Default 5,000 ms. */
  readonly authTimeoutMs?: number;
  /**
   * Send-buffer limit in bytes: reading pauses while the socket reports
   * backpressure, and a client whose unsent output passes this is dropped. Default 1 MiB.
   */
  readonly maxBufferedBytes?: number;
  /** Unanswered requests per connection before it stops reading. Default 64. */
  readonly maxPendingRequests?: number;
  /** TCP keep-alive probe delay; 0 turns keep-alive off. Default 60,000 ms. */
  readonly keepAliveMs?: number;
  readonly loggers?: LoggerFactory;
}

/** The options with every default applied. */
export interface ResolvedTcpOptions extends Required<Omit<TcpTransportOptions, 'registry' | 'loggers'>> {
  readonly registry: ConnectionRegistry | undefined;
  readonly loggers: LoggerFactory | undefined;
}

/** Default deadline of the auth frame: 5 s. */
export const DEFAULT_AUTH_TIMEOUT_MS = 5_000;

/**
 * Applies the defaults and checks the numbers.
 *
 * @throws TypeError for a limit that is not a positive integer.
 * @example
 * ```ts
 * resolveTcpOptions({ dispatcher }).authTimeoutMs; // 5000
 * ```
 */
export function resolveTcpOptions(options: TcpTransportOptions): ResolvedTcpOptions {
  return {
    dispatcher: options.dispatcher,
    registry: options.registry,
    maxFrameBytes: positive('maxFrameBytes', options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES),
    authTimeoutMs: positive('authTimeoutMs', options.authTimeoutMs ?? DEFAULT_AUTH_TIMEOUT_MS),
    maxBufferedBytes: positive('maxBufferedBytes', options.maxBufferedBytes ?? 1024 * 1024),
    maxPendingRequests: positive('maxPendingRequests', options.maxPendingRequests ?? 64),
    keepAliveMs: nonNegative('keepAliveMs', options.keepAliveMs ?? 60_000),
    loggers: options.loggers,
  };
}

function positive(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value <= 0) throw new TypeError(`${name} must be a positive integer, got ${value}`);
  return value;
}

function nonNegative(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 0) throw new TypeError(`${name} must be a non-negative integer, got ${value}`);
  return value;
}
