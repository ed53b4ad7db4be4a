/**
 * The server's answer to an auth frame, built from an authentication outcome.
 */
import { WIRE_ERROR_MESSAGES, type AuthReply, type WireErrorCode } from '@portcullis/protocol';
import type { ConnectionAuthResult } from './connection-authenticator.js';

const AUTH_OK: AuthReply = Object.freeze({ type: 'auth', ok: true });

/**
 * The auth reply for an authentication outcome, or for a wire error code (for
 * example `bad_request` when the first frame was not an auth frame).
 *
 * @example
 * ```ts
 * socket.send(JSON.stringify(authReply(await authenticator.authenticate(frame.token))));
 * ```
 */
export function authReply(outcome: ConnectionAuthResult | WireErrorCode): AuthReply {
  if (typeof outcome === 'string') return { type: 'auth', ok: false, error: { code: outcome, message: WIRE_ERROR_MESSAGES[outcome] } };
  if (outcome.ok) return AUTH_OK;
  return { type: 'auth', ok: false, error: { code: outcome.code, message: outcome.message } };
}
