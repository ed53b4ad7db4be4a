/**
 * The options of a `ConnectionProtocol` and the vocabulary a transport maps to its
 * own: how the handshake goes and why a connection is closed.
 */
import type { CloseReason } from '@portcullis/protocol';
import type { Transport } from '../contracts/auth-context.js';
import type { AuthTicket } from './auth-waiting-room.js';
import type { Admitted } from './connection-plan.js';
import type { ConnectionRegistry } from './connection-registry.js';
import type { GateDispatcher } from './gate-dispatcher.js';

/**
 * Why a protocol closes its connection: the protocol's {@link CloseReason}
 * (`unauthorized`, WebSocket 4401; `unavailable`; `bad_request`, the first frame
 * was required to be an auth frame and was not). Each transport maps it in one table.
 *
 * @example
 * ```ts
 * const closeCode: Record<ProtocolCloseReason, number> = { unauthorized: 4401, unavailable: 1013, bad_request: 1008 };
 * ```
 */
export type ProtocolCloseReason = CloseReason;

/**
 * `required`: the first message must be an auth frame (TCP). `optional`: it may be
 * one (a WebSocket opened without `Authorization`). `done`: the transport already
 * authenticated the connection (WebSocket `Authorization` header).
 *
 * @example
 * ```ts
 * const handshake: HandshakeMode = credential ? 'done' : 'optional';
 * ```
 */
export type HandshakeMode = 'required' | 'optional' | 'done';

/**
 * Options of {@link ConnectionProtocol}.
 *
 * @example
 * ```ts
 * const options: ConnectionProtocolOptions = {
 *   dispatcher, registry, transport: 'tcp', clientId, remoteAddress, handshake: 'required',
 *   send: (text) => socket.write(encodeFrame(text)),
 *   close: () => socket.end(),
 * };
 * ```
 */
export interface ConnectionProtocolOptions {
  readonly dispatcher: Pick<GateDispatcher, 'dispatch' | 'dispatchText' | 'admit' | 'refreshConnection'>;
  /** Tracks the connection, so a revocation closes it and pushes reach it. */
  readonly registry: Pick<ConnectionRegistry, 'add' | 'attach' | 'remove'>;
  readonly transport: Transport;
  readonly clientId: string;
  readonly remoteAddress: string | undefined;
  readonly handshake: HandshakeMode;
  /** With `handshake: 'done'`: the credential the transport's `admit` call accepted. */
  readonly credential?: Admitted;
  /** The memo that `admit` call filled; the connection keeps it. */
  readonly memo?: Map<unknown, unknown>;
  /** Sends one JSON text message (reply, auth reply, push). */
  readonly send: (text: string) => void;
  /** Closes the connection; called at most once. */
  readonly close: (reason: ProtocolCloseReason, detail: string) => void;
  /**
   * Without `handshake: 'done'`: the first message must arrive within this time, or the
   * connection is closed with `unauthorized`. Default: no deadline.
   */
  readonly authTimeoutMs?: number;
  /** An anonymous connection with no complete message for this long is closed with `unauthorized`. 0 or absent: never. */
  readonly anonymousIdleTimeoutMs?: number;
  /** The connection's place in the transport's `AuthWaitingRoom`; left once it authenticates, opens anonymously or closes. */
  readonly authTicket?: AuthTicket;
  /** Unanswered requests at which `onSaturated` fires; default 64. */
  readonly maxPending?: number;
  /** Stop reading from the peer until `onRelieved`. */
  readonly onSaturated?: () => void;
  readonly onRelieved?: () => void;
}
