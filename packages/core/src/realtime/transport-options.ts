/**
 * The options every connection-oriented transport (WebSocket, TCP) shares, and the
 * number checks every transport applies to its own limits.
 */
import type { LoggerFactory } from '../contracts/logger.js';
import type { ConnectionRegistry } from './connection-registry.js';
import type { GateDispatcher } from './gate-dispatcher.js';

/**
 * What a connection-oriented transport needs from core, and its flow-control limits.
 *
 * @example
 * ```ts
 * const options: ConnectionTransportOptions = { dispatcher, registry, maxPendingRequests: 32 };
 * ```
 */
export interface ConnectionTransportOptions {
  /** Routes requests to gates and checks credentials. */
  readonly dispatcher: GateDispatcher;
  /** Tracks connections so a revocation closes them and pushes reach them. Required: without it a revoked credential's socket would stay open. */
  readonly registry: ConnectionRegistry;
  /**
   * Send-buffer limit in bytes: reading pauses while replies pile up unsent, and a
   * client whose unsent output would pass this is dropped. Default 1 MiB.
   */
  readonly maxBufferedBytes?: number;
  /** Unanswered requests per connection before it stops reading. Default 64. */
  readonly maxPendingRequests?: number;
  /**
   * A connection that must or may authenticate with an auth frame (TCP; a WebSocket
   * opened without `Authorization`) is closed when no first message arrives within
   * this time. Default 5,000 ms.
   */
  readonly authTimeoutMs?: number;
  /**
   * Connections from one client address that may wait to authenticate at once; past
   * it a new one is refused (WebSocket: HTTP 429 before the upgrade) or closed at
   * once (TCP). Default 64.
   */
  readonly maxAwaitingAuthPerAddress?: number;
  /**
   * An anonymous connection (`{"type":"auth","token":null}`, or a WebSocket whose first
   * message was a request) that sends no complete message for this long is closed;
   * pings and partial frames do not count. 0 turns it off. Default 60,000 ms.
   */
  readonly anonymousIdleTimeoutMs?: number;
  readonly loggers?: LoggerFactory;
}

/**
 * {@link ConnectionTransportOptions} with every default applied.
 *
 * @example
 * ```ts
 * const { maxBufferedBytes } = resolveConnectionTransportOptions({ dispatcher, registry }); // 1048576
 * ```
 */
export interface ResolvedConnectionTransportOptions {
  readonly dispatcher: GateDispatcher;
  readonly registry: ConnectionRegistry;
  readonly maxBufferedBytes: number;
  readonly maxPendingRequests: number;
  readonly authTimeoutMs: number;
  readonly maxAwaitingAuthPerAddress: number;
  readonly anonymousIdleTimeoutMs: number;
  readonly loggers: LoggerFactory | undefined;
}

/**
 * Default send-buffer limit of a connection: 1 MiB.
 *
 * @example
 * ```ts
 * attachWebSocketTransport(http, { dispatcher, registry, maxBufferedBytes: DEFAULT_MAX_BUFFERED_BYTES / 4 });
 * ```
 */
export const DEFAULT_MAX_BUFFERED_BYTES = 1024 * 1024;

/**
 * Default number of unanswered requests per connection before it stops reading: 64.
 *
 * @example
 * ```ts
 * createTcpTransport({ dispatcher, registry, maxPendingRequests: DEFAULT_MAX_PENDING_REQUESTS * 2 });
 * ```
 */
export const DEFAULT_MAX_PENDING_REQUESTS = 64;

/**
 * Default deadline of the first message of a connection that authenticates with an auth frame: 5 s.
 *
 * @example
 * ```ts
 * createTcpTransport({ dispatcher, registry, authTimeoutMs: DEFAULT_AUTH_TIMEOUT_MS / 5 });
 * ```
 */
export const DEFAULT_AUTH_TIMEOUT_MS = 5_000;

/**
 * Default number of connections from one address that may wait to authenticate: 64.
 *
 * @example
 * ```ts
 * attachWebSocketTransport(http, { dispatcher, registry, maxAwaitingAuthPerAddress: DEFAULT_MAX_AWAITING_AUTH_PER_ADDRESS * 4 });
 * ```
 */
export const DEFAULT_MAX_AWAITING_AUTH_PER_ADDRESS = 64;

/**
 * Default idle timeout of an anonymous connection: 60 s.
 *
 * @example
 * ```ts
 * createTcpTransport({ dispatcher, registry, anonymousIdleTimeoutMs: DEFAULT_ANONYMOUS_IDLE_TIMEOUT_MS / 2 });
 * ```
 */
export const DEFAULT_ANONYMOUS_IDLE_TIMEOUT_MS = 60_000;

/**
 * Applies the shared defaults and checks the limits.
 *
 * @throws TypeError for a limit that is not a positive integer, or without a dispatcher or a registry.
 * @example
 * ```ts
 * const resolved = { ...resolveConnectionTransportOptions(options), authTimeoutMs: 5000 };
 * ```
 */
export function resolveConnectionTransportOptions(options: ConnectionTransportOptions): ResolvedConnectionTransportOptions {
  if (typeof options.dispatcher?.dispatch !== 'function') throw new TypeError('a transport needs a dispatcher (GateDispatcher)');
  if (typeof options.registry?.add !== 'function') {
    throw new TypeError('a transport needs a registry (ConnectionRegistry): without one, revoking a credential could not close its sockets');
  }
  return {
    dispatcher: options.dispatcher,
    registry: options.registry,
    maxBufferedBytes: positiveInteger('maxBufferedBytes', options.maxBufferedBytes ?? DEFAULT_MAX_BUFFERED_BYTES),
    maxPendingRequests: positiveInteger('maxPendingRequests', options.maxPendingRequests ?? DEFAULT_MAX_PENDING_REQUESTS),
    authTimeoutMs: positiveInteger('authTimeoutMs', options.authTimeoutMs ?? DEFAULT_AUTH_TIMEOUT_MS),
    maxAwaitingAuthPerAddress: positiveInteger('maxAwaitingAuthPerAddress', options.maxAwaitingAuthPerAddress ?? DEFAULT_MAX_AWAITING_AUTH_PER_ADDRESS),
    anonymousIdleTimeoutMs: nonNegativeInteger('anonymousIdleTimeoutMs', options.anonymousIdleTimeoutMs ?? DEFAULT_ANONYMOUS_IDLE_TIMEOUT_MS),
    loggers: options.loggers,
  };
}

/**
 * `value` when it is a positive safe integer.
 *
 * @throws TypeError naming the option otherwise.
 * @example
 * ```ts
 * positiveInteger('maxFrameBytes', options.maxFrameBytes ?? 65536);
 * ```
 */
export function positiveInteger(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value <= 0) throw new TypeError(`${name} must be a positive integer, got ${value}`);
  return value;
}

/**
 * `value` when it is a non-negative safe integer (0 usually turns a feature off).
 *
 * @throws TypeError naming the option otherwise.
 * @example
 * ```ts
 * nonNegativeInteger('heartbeatIntervalMs', options.heartbeatIntervalMs ?? 30_000);
 * ```
 */
export function nonNegativeInteger(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 0) throw new TypeError(`${name} must be a non-negative integer, got ${value}`);
  return value;
}
