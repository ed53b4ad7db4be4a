/** The options, states and events of a real-time connection. */
import type { PortcullisClientError } from '../errors/portcullis-client-error.js';
import type { BackoffOptions } from './backoff.js';
import type { InboundFrame, RealtimeTransport } from './realtime-transport.js';

/** Which credential a connection authenticates with; one per connection. */
export type CredentialKind = 'session' | 'jwt' | 'none';

/** Where a connection gets its credential; `PortcullisClient` is one. */
export interface CredentialSource {
  /** A usable credential, renewed first when expired. */
  credential(kind: 'session' | 'jwt'): Promise<string>;
  /** A new credential after the server refused `refused` (single-flight; no renewal if it was already replaced). */
  renewCredential(kind: 'session' | 'jwt', refused: string): Promise<string>;
  /** The credential now held if it is still usable by the clock, without renewing. */
  peekCredential(kind: 'session' | 'jwt'): string | undefined;
}

/** The life of a connection. */
export type ConnectionState = 'idle' | 'connecting' | 'open' | 'reconnecting' | 'closed';

/** Events of a {@link RealtimeConnection}. */
export interface ConnectionEvents {
  open: { readonly reconnected: boolean };
  reconnecting: { readonly attempt: number; readonly delayMs: number; readonly error?: PortcullisClientError };
  /** A server-push frame: any frame that is not a reply and not an auth answer. */
  push: InboundFrame;
  /** The final close; `error` is set unless `close()` was called. */
  close: { readonly error?: PortcullisClientError };
}

/** Options of {@link RealtimeConnection}. */
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
}

/** Options of one `request`. */
export interface RequestOptions {
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
}

