/**
 * Why a server closes a real-time connection, and the WebSocket close codes
 * that tell a client so.
 */
import type { WireErrorCode } from './error-codes.js';

/**
 * Why a server closes a connection: `unauthorized` (the auth frame was refused or
 * the credential revoked), `unavailable` (the credential could not be checked),
 * `bad_request` (the first frame had to be an auth frame and was not). Each
 * transport maps it to its own signal in one table (WebSocket: {@link WS_CLOSE}).
 *
 * @example
 * ```ts
 * const closeCode: Record<CloseReason, number> = { unauthorized: 4401, unavailable: 1013, bad_request: 1008 };
 * ```
 */
export type CloseReason = Extract<WireErrorCode, 'unauthorized' | 'unavailable' | 'bad_request'>;

/**
 * The WebSocket close codes of the protocol.
 *
 * @example
 * ```ts
 * ws.onclose = (event) => {
 *   if (event.code === WS_CLOSE.unauthorized) void reauthenticate();
 * };
 * ```
 */
export const WS_CLOSE = Object.freeze({
  /** Closed on purpose by the side that closes (a client's `close()`). */
  normal: 1000,
  /** The server is shutting down. */
  goingAway: 1001,
  /** Policy violation: the first message had to be an auth frame and was not. */
  policy: 1008,
  /** A message over the server's `maxPayload`. */
  tooLarge: 1009,
  /** The credential could not be checked (session store down); try again later. */
  unavailable: 1013,
  /** The credential was refused (auth frame) or revoked. */
  unauthorized: 4401,
} as const);
