import {
  nonNegativeInteger,
  positiveInteger,
  resolveConnectionTransportOptions,
  type ConnectionTransportOptions,
  type ResolvedConnectionTransportOptions,
} from '@portcullis/core/transport';
import { DEFAULT_MAX_FRAME_BYTES } from '@portcullis/protocol';

/**
 * Options of {@link createTcpTransport}: core's shared connection options
 * (`dispatcher`, `registry`, `maxBufferedBytes`, `maxPendingRequests`, `loggers`)
 * plus the TCP ones. Only `dispatcher` is required.
 *
 * @example
 * ```ts
 * const options: TcpTransportOptions = { dispatcher, registry, authTimeoutMs: 2000 };
 * ```
 */
export interface TcpTransportOptions extends ConnectionTransportOptions {
  /** Largest frame body in bytes; a larger length prefix closes the connection. Default 64 KiB. */
  readonly maxFrameBytes?: number;
  /** The auth frame must arrive within this time after connect. Default 5,000 ms. */
  readonly authTimeoutMs?: number;
  /** TCP keep-alive probe delay; 0 turns keep-alive off. Default 60,000 ms. */
  readonly keepAliveMs?: number;
}

/** The options with every default applied. */
export interface ResolvedTcpOptions extends ResolvedConnectionTransportOptions {
  readonly maxFrameBytes: number;
  readonly authTimeoutMs: number;
  readonly keepAliveMs: number;
}

/**
 * Default deadline of the auth frame: 5 s.
 *
 * @example
 * ```ts
 * createTcpTransport({ dispatcher, authTimeoutMs: DEFAULT_AUTH_TIMEOUT_MS / 5 });
 * ```
 */
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
    ...resolveConnectionTransportOptions(options),
    maxFrameBytes: positiveInteger('maxFrameBytes', options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES),
    authTimeoutMs: positiveInteger('authTimeoutMs', options.authTimeoutMs ?? DEFAULT_AUTH_TIMEOUT_MS),
    keepAliveMs: nonNegativeInteger('keepAliveMs', options.keepAliveMs ?? 60_000),
  };
}
