import {
  DEFAULT_AUTH_TIMEOUT_MS,
  nonNegativeInteger,
  positiveInteger,
  resolveConnectionTransportOptions,
  type ConnectionTransportOptions,
  type ResolvedConnectionTransportOptions,
} from '@portcullis/core/transport';
import { DEFAULT_MAX_FRAME_BYTES } from '@portcullis/protocol';

/**
 * Options of {@link createTcpTransport}: core's shared connection options
 * (`dispatcher`, `registry`, `maxBufferedBytes`, `maxPendingRequests`, `authTimeoutMs`,
 * `maxAwaitingAuthPerAddress`, `anonymousIdleTimeoutMs`, `loggers`) plus the TCP ones.
 * Only `dispatcher` and `registry` are required.
 *
 * @example
 * ```ts
 * const options: TcpTransportOptions = { dispatcher, registry, authTimeoutMs: 2000 };
 * ```
 */
export interface TcpTransportOptions extends ConnectionTransportOptions {
  /** Largest frame body in bytes; a larger length prefix closes the connection. Default 64 KiB. */
  readonly maxFrameBytes?: number;
  /** TCP keep-alive probe delay; 0 turns keep-alive off. Default 60,000 ms. */
  readonly keepAliveMs?: number;
}

/** The options with every default applied. */
export interface ResolvedTcpOptions extends ResolvedConnectionTransportOptions {
  readonly maxFrameBytes: number;
  readonly keepAliveMs: number;
}

export { DEFAULT_AUTH_TIMEOUT_MS };

/**
 * Applies the defaults and checks the numbers.
 *
 * @throws TypeError for a limit that is not a positive integer.
 * @example
 * ```ts
 * resolveTcpOptions({ dispatcher, registry }).authTimeoutMs; // 5000
 * ```
 */
export function resolveTcpOptions(options: TcpTransportOptions): ResolvedTcpOptions {
  return {
    ...resolveConnectionTransportOptions(options),
    maxFrameBytes: positiveInteger('maxFrameBytes', options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES),
    keepAliveMs: nonNegativeInteger('keepAliveMs', options.keepAliveMs ?? 60_000),
  };
}
