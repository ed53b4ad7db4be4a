/**
 * The server's answer to an auth frame, built from a connection's admission.
 */
import { WIRE_ERROR_MESSAGES, type AuthReply, type WireErrorCode } from '@portcullis/protocol';

const AUTH_OK: AuthReply = Object.freeze({ type: 'auth', ok: true });

/**
 * The auth reply for a connection's admission, or for a wire error code (for
 * example `bad_request` when the first frame was not an auth frame).
 *
 * @example
 * ```ts
 * socket.send(JSON.stringify(authReply(await dispatcher.admit({ ...ctx, credential: frame.token }))));
 * ```
 */
export function authReply(outcome: { readonly ok: true } | { readonly ok: false; readonly code: WireErrorCode; readonly message: string } | WireErrorCode): AuthReply {
  if (typeof outcome === 'string') return { type: 'auth', ok: false, error: { code: outcome, message: WIRE_ERROR_MESSAGES[outcome] } };
  if (outcome.ok) return AUTH_OK;
  return { type: 'auth', ok: false, error: { code: outcome.code, message: outcome.message } };
}
