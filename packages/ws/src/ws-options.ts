import type { IncomingMessage } from 'node:http';
import {
  nonNegativeInteger,
  positiveInteger,
  resolveConnectionTransportOptions,
  type ConnectionTransportOptions,
  type ResolvedConnectionTransportOptions,
} from '@portcullis/core/transport';
import type { PerMessageDeflateOptions } from 'ws';

/**
 * Options of {@link attachWebSocketTransport}: core's shared connection options
 * (`dispatcher`, `registry`, `maxBufferedBytes`, `maxPendingRequests`, `authTimeoutMs`,
 * `maxAwaitingAuthPerAddress`, `anonymousIdleTimeoutMs`, `loggers`) plus the WebSocket
 * ones. Only `dispatcher` and `registry` are required.
 *
 * @example
 * ```ts
 * const options: WebSocketTransportOptions = { dispatcher, registry, maxPayload: 16 * 1024 };
 * ```
 */
export interface WebSocketTransportOptions extends ConnectionTransportOptions {
  /** URL path handled; other upgrade requests are left to other listeners. Default `/ws`. */
  readonly path?: string;
  /** Largest message accepted, in bytes; a larger one closes the connection with 1009. Default 64 KiB. */
  readonly maxPayload?: number;
  /** permessage-deflate; off by default (CPU and memory per connection, compression side channels). */
  readonly perMessageDeflate?: boolean | PerMessageDeflateOptions;
  /** Ping interval; a peer that has not answered the previous ping is dropped. 0 turns it off. Default 30 s. */
  readonly heartbeatIntervalMs?: number;
  /** The peer address the shields see; default the socket's. Override behind a trusted proxy. */
  readonly remoteAddress?: (request: IncomingMessage) => string | undefined;
}

/** The options with every default applied. */
export interface ResolvedWebSocketOptions extends ResolvedConnectionTransportOptions {
  readonly path: string;
  readonly maxPayload: number;
  readonly perMessageDeflate: boolean | PerMessageDeflateOptions;
  readonly heartbeatIntervalMs: number;
  readonly remoteAddress: (request: IncomingMessage) => string | undefined;
}

/**
 * Default `maxPayload`: 64 KiB (the `ws` default is 100 MiB).
 *
 * @example
 * ```ts
 * attachWebSocketTransport(http, { dispatcher, registry, maxPayload: DEFAULT_WS_MAX_PAYLOAD / 4 });
 * ```
 */
export const DEFAULT_WS_MAX_PAYLOAD = 64 * 1024;

/**
 * Default heartbeat interval: 30 s.
 *
 * @example
 * ```ts
 * attachWebSocketTransport(http, { dispatcher, registry, heartbeatIntervalMs: DEFAULT_HEARTBEAT_INTERVAL_MS / 2 });
 * ```
 */
export const DEFAULT_HEARTBEAT_INTERVAL_MS = 30_000;

/**
 * Applies the defaults and checks the numbers.
 *
 * @throws TypeError for a path without a leading `/`, or a limit that is not a positive integer.
 * @example
 * ```ts
 * resolveWebSocketOptions({ dispatcher, registry }).maxPayload; // 65536
 * ```
 */
export function resolveWebSocketOptions(options: WebSocketTransportOptions): ResolvedWebSocketOptions {
  const path = options.path ?? '/ws';
  if (!path.startsWith('/')) throw new TypeError(`WebSocket path must start with "/", got "${path}"`);
  return {
    ...resolveConnectionTransportOptions(options),
    path,
    maxPayload: positiveInteger('maxPayload', options.maxPayload ?? DEFAULT_WS_MAX_PAYLOAD),
    perMessageDeflate: options.perMessageDeflate ?? false,
    heartbeatIntervalMs: nonNegativeInteger('heartbeatIntervalMs', options.heartbeatIntervalMs ?? DEFAULT_HEARTBEAT_INTERVAL_MS),
    remoteAddress: options.remoteAddress ?? ((request) => request.socket.remoteAddress),
  };
}
