/**
 * The server's answer to an auth frame, built from a connection's admission.
 */
import { wireError, type AuthReply, type WireError, type WireErrorCode } from '@portcullis/protocol';
import { defaultRetryAfterMs } from '../errors/portcullis-error.js';

const AUTH_OK: AuthReply = Object.freeze({ type: 'auth', ok: true });

/**
 * The error of a refused auth or refresh frame, with `retryAfterMs` when given; without one,
 * the code's default ({@link defaultRetryAfterMs}: `unavailable` says to try again in a
 * second, as a gate's reply does).
 *
 * @example
 * ```ts
 * frameError('unavailable'); // { code: 'unavailable', message: '…', retryAfterMs: 1000 }
 * frameError('rate_limited', undefined, 250); // { code: 'rate_limited', message: '…', retryAfterMs: 250 }
 * ```
 */
export function frameError(code: WireErrorCode, message?: string, retryAfterMs?: number): WireError {
  return wireError(code, message, retryAfterMs ?? defaultRetryAfterMs(code));
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
export function authReply(
  outcome: { readonly ok: true } | { readonly ok: false; readonly code: WireErrorCode; readonly message: string; readonly retryAfterMs?: number } | WireErrorCode,
): AuthReply {
  if (typeof outcome === 'string') return { type: 'auth', ok: false, error: frameError(outcome) };
  if (outcome.ok) return AUTH_OK;
  return { type: 'auth', ok: false, error: frameError(outcome.code, outcome.message, outcome.retryAfterMs) };
}
