/**
 * The server's answer to an auth frame, built from a connection's admission.
 */
import { WIRE_ERROR_MESSAGES, type AuthReply, type WireError, type WireErrorCode } from '@portcullis/protocol';
import { UNAVAILABLE_RETRY_AFTER_MS } from '../errors/portcullis-error.js';

const AUTH_OK: AuthReply = Object.freeze({ type: 'auth', ok: true });

/**
 * The error of a refused auth or refresh frame: `unavailable` says when to try again, as a
 * gate's reply does.
 *
 * @example
 * ```ts
 * frameError('unavailable'); // { code: 'unavailable', message: '…', retryAfterMs: 1000 }
 * ```
 */
export function frameError(code: WireErrorCode, message: string = WIRE_ERROR_MESSAGES[code]): WireError {
  return code === 'unavailable' ? { code, message, retryAfterMs: UNAVAILABLE_RETRY_AFTER_MS } : { code, message };
}

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
  if (typeof outcome === 'string') return { type: 'auth', ok: false, error: frameError(outcome) };
  if (outcome.ok) return AUTH_OK;
  return { type: 'auth', ok: false, error: frameError(outcome.code, outcome.message) };
}
