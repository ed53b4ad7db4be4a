/**
 * The seam between the transport-neutral {@link RealtimeConnection} and one
 * transport (WebSocket, TCP, UDP). A transport opens authenticated links; the
 * connection does ids, timeouts, push events and reconnects.
 */
import type { AuthFrame, GateRequest, RefreshFrame } from '@portcullis/protocol';
import type { PortcullisClientError } from '../errors/portcullis-client-error.js';

/**
 * A request frame of the real-time contract: the protocol's `GateRequest`
 * (`token` only on UDP, added by that transport).
 *
 * @example
 * ```ts
 * const frame: RequestFrame = { id: 1, portal: '/game', gate: 'move', data: { x: 1, y: 2 } };
 * ```
 */
export type RequestFrame = GateRequest;

/**
 * Any JSON object the server sent after the handshake.
 *
 * @example
 * ```ts
 * conn.on('push', (frame: InboundFrame) => console.log(frame.type));
 * ```
 */
export type InboundFrame = Readonly<Record<string, unknown>>;

/**
 * Why a link ended.
 *
 * @example
 * ```ts
 * sink.closed({ refused: code === 4401, closeCode: code } satisfies LinkClosed);
 * ```
 */
export interface LinkClosed {
  /** The server refused the credential after the link was up (WebSocket close 4401, a late auth refusal). */
  readonly refused: boolean;
  /** WebSocket close code, when there was one. */
  readonly closeCode?: number;
  readonly error?: PortcullisClientError;
}

/**
 * Where a link delivers what it receives.
 *
 * @example
 * ```ts
 * const sink: LinkSink = { frame: (frame) => inbox.push(frame), closed: (info) => console.log(info.refused) };
 * ```
 */
export interface LinkSink {
  frame(frame: InboundFrame): void;
  closed(info: LinkClosed): void;
}

/**
 * What a link is opened with.
 *
 * @example
 * ```ts
 * const link = await transport.open({ credential: null, baseUrl, handshakeTimeoutMs: 5000 } satisfies LinkRequest, sink);
 * ```
 */
export interface LinkRequest {
  /** The session token or JWT, or `null` for an anonymous connection. */
  readonly credential: string | null;
  /** The session's UDP key (base64url) when the credential is a session token the server issued one with. */
  readonly udpKey?: string;
  /** The client's HTTP base address, for transports that derive their address from it. */
  readonly baseUrl: string;
  /** How long the connect and auth handshake may take. */
  readonly handshakeTimeoutMs: number;
}

/**
 * One open, authenticated link.
 *
 * @example
 * ```ts
 * const link: RealtimeLink = await transport.open(request, sink);
 * link.send({ id: 1, portal: '/game', gate: 'ping', data: null });
 * ```
 */
export interface RealtimeLink {
  /** Sends one request; throws a `PortcullisClientError` when it cannot be sent (too large, link closed). */
  send(frame: RequestFrame): void;
  /**
   * Sends an in-band refresh or auth frame on an authenticated link; absent where the
   * transport has no connection (UDP). Throws like `send`.
   */
  control?(frame: RefreshFrame | AuthFrame): void;
  /** The reply to `id` arrived or its caller gave up: stop any retransmission. */
  settle(id: number): void;
  /** Closes the link; `closed` is not reported for a close asked for here. */
  close(): void;
}

/**
 * A way to reach the server's real-time endpoint.
 *
 * `open` resolves once the server accepted the credential, and rejects with a
 * `PortcullisClientError`: `unauthorized` (or another server code) when the
 * credential was refused, `network_error`, `timeout` or `connection_closed`
 * when the server could not be reached.
 *
 * @example
 * ```ts
 * const conn = await client.connect({ transport: webSocketTransport() });
 * ```
 */
export interface RealtimeTransport {
  readonly kind: 'ws' | 'tcp' | 'udp';
  open(request: LinkRequest, sink: LinkSink): Promise<RealtimeLink>;
}
