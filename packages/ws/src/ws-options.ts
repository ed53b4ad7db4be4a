import type { IncomingMessage } from 'node:http';
import type { ConnectionRegistry, GateDispatcher, LoggerFactory } from '@portcullis/core';
import type { PerMessageDeflateOptions } from 'ws';

/**
 * Options of {@link attachWebSocketTransport}. Only `dispatcher` is required.
 *
 * @example
 * ```ts
 * const options: WebSocketTransportOptions = { dispatcher, registry, maxPayload: 16 * 1024 };
 * ```
 */
export interface WebSocketTransportOptions {
  /** Routes requests to gates and checks credentials (`@portcullis/core`). */
  readonly dispatcher: GateDispatcher;
  /** Tracks connections so a revocation closes them (4401) and pushes reach them. Strongly recommended. */
  readonly registry?: ConnectionRegistry;
  /** URL path handled; other upgrade requests are left to other listeners. Default `/ws`. */
  readonly path?: string;
  /** Largest message accepted, in bytes; a larger one closes the connection with 1009. Default 64 KiB. */
  readonly maxPayload?: number;
  /** permessage-deflate; off by default (CPU and memory per connection, compression side channels). */
  readonly perMessageDeflate?: boolean | PerMessageDeflateOptions;
  /** Ping interval; a peer that has not answered the previous ping is dropped. 0 turns it off. Default 30 s. */
  readonly heartbeatIntervalMs?: number;
  /**
   * Send-buffer limit in bytes. Above half of it the connection stops reading
   * until the buffer drains to a quarter; a message that would take it over the
   * limit drops the client (terminated, no close frame). Default 1 MiB.
   */
  readonly maxBufferedBytes?: number;
  /** Unanswered requests per connection before it stops reading. Default 64. */
  readonly maxPendingRequests?: number;
  /** The peer address the shields see; default the socket's. Override behind a trusted proxy. */
  readonly remoteAddress?: (request: IncomingMessage) => string | undefined;
  readonly loggers?: LoggerFactory;
}

/** The options with every default applied. */
export interface ResolvedWebSocketOptions extends Required<Omit<WebSocketTransportOptions, 'registry' | 'loggers'>> {
  readonly registry: ConnectionRegistry | undefined;
  readonly loggers: LoggerFactory | undefined;
}

/** Default `maxPayload`: 64 KiB (the `ws` default is 100 MiB). */
export const DEFAULT_WS_MAX_PAYLOAD = 64 * 1024;

/** Default heartbeat interval: 30 s. */
export const DEFAULT_HEARTBEAT_INTERVAL_MS = 30_000;

/** Default send-buffer high-water mark: 1 MiB. */
export const DEFAULT_MAX_BUFFERED_BYTES = 1024 * 1024;

/**
 * Applies the defaults and checks the numbers.
 *
 * @throws TypeError for a path without a leading `/`, or a limit that is not a positive integer.
 * @example
 * ```ts
 * resolveWebSocketOptions({ dispatcher }).maxPayload; // 65536
 * ```
 */
export function resolveWebSocketOptions(options: WebSocketTransportOptions): ResolvedWebSocketOptions {
  const path = options.path ?? '/ws';
  if (!path.startsWith('/')) throw new TypeError(`WebSocket path must start with "/", got "${path}"`);
  return {
    dispatcher: options.dispatcher,
    registry: options.registry,
    path,
    maxPayload: positive('maxPayload', options.maxPayload ?? DEFAULT_WS_MAX_PAYLOAD),
    perMessageDeflate: options.perMessageDeflate ?? false,
    heartbeatIntervalMs: nonNegative('heartbeatIntervalMs', options.heartbeatIntervalMs ?? DEFAULT_HEARTBEAT_INTERVAL_MS),
    maxBufferedBytes: positive('maxBufferedBytes', options.maxBufferedBytes ?? DEFAULT_MAX_BUFFERED_BYTES),
    maxPendingRequests: positive('maxPendingRequests', options.maxPendingRequests ?? 64),
    remoteAddress: options.remoteAddress ?? ((request) => request.socket.remoteAddress),
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
