/** The options, states and events of a real-time connection. */
import type { CredentialKind as WireCredentialKind } from '@portcullis/protocol';
import type { PortcullisClientError } from '../errors/portcullis-client-error.js';
import type { BackoffOptions } from './backoff.js';
import type { InboundFrame, RealtimeTransport } from './realtime-transport.js';

/**
 * Which credential a connection authenticates with, one per connection: one of
 * the protocol's credential kinds, or `none` for an anonymous connection.
 *
 * @example
 * ```ts
 * const kind: CredentialKind = 'session';
 * await client.connect({ credential: kind });
 * ```
 */
export type CredentialKind = WireCredentialKind | 'none';

/**
 * Where a connection gets its credential; `PortcullisClient` is one.
 *
 * @example
 * ```ts
 * const fixed: CredentialSource = {
 *   credential: async () => token,
 *   renewCredential: async () => token,
 *   peekCredential: () => token,
 * };
 * ```
 */
export interface CredentialSource {
  /** A usable credential, renewed first when expired. */
  credential(kind: 'session' | 'jwt'): Promise<string>;
  /** A new credential after the server refused `refused` (single-flight; no renewal if it was already replaced). */
  renewCredential(kind: 'session' | 'jwt', refused: string): Promise<string>;
  /** The credential now held if it is still usable by the clock, without renewing. */
  peekCredential(kind: 'session' | 'jwt'): string | undefined;
  /** The UDP key the server issued with this session access token, if known. */
  udpKeyOf?(accessToken: string): string | undefined;
}

/**
 * The life of a connection.
 *
 * @example
 * ```ts
 * const state: ConnectionState = conn.state; // 'open', 'reconnecting', …
 * ```
 */
export type ConnectionState = 'idle' | 'connecting' | 'open' | 'reconnecting' | 'closed';

/**
 * Events of a {@link RealtimeConnection}.
 *
 * @example
 * ```ts
 * conn.on('push', (frame: ConnectionEvents['push']) => render(frame));
 * ```
 */
export interface ConnectionEvents {
  open: { readonly reconnected: boolean };
  reconnecting: { readonly attempt: number; readonly delayMs: number; readonly error?: PortcullisClientError };
  /** A server-push frame: any frame that is not a reply and not an auth answer. */
  push: InboundFrame;
  /** The final close; `error` is set unless `close()` was called. */
  close: { readonly error?: PortcullisClientError };
}

/**
 * Options of {@link RealtimeConnection}.
 *
 * @example
 * ```ts
 * const conn = new RealtimeConnection({ transport: webSocketTransport(), credentials: client, credential: 'session', baseUrl } satisfies RealtimeConnectionOptions);
 * ```
 */
export interface RealtimeConnectionOptions {
  readonly transport: RealtimeTransport;
  readonly credentials: CredentialSource;
  readonly credential: CredentialKind;
  readonly baseUrl: string;
  /** Default timeout of `request` (10,000 ms). */
  readonly requestTimeoutMs?: number;
  /** Timeout of connect + auth handshake (5,000 ms). */
  readonly handshakeTimeoutMs?: number;
  /** Reconnect spacing, or `false` to close instead of reconnecting. */
  readonly reconnect?: Partial<BackoffOptions> | false;
  /**
   * What a `rate_limited` (or `overloaded`) reply does; either means the gate did not
   * run. `wait` (default): the connection backs off
   * that gate for the reply's `retryAfterMs` (later requests to it wait too) and
   * sends the refused request again, unless its timeout would pass first, in which
   * case it rejects with that code at once. `reject`: the request rejects with
   * the code (its `retryAfterMs` says when to try again).
   */
  readonly rateLimited?: 'wait' | 'reject';
}

/**
 * Options of one `request`.
 *
 * @example
 * ```ts
 * await conn.request('/game', 'move', { x: 1, y: 2 }, { timeoutMs: 1000 } satisfies RequestOptions);
 * ```
 */
export interface RequestOptions {
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
}

