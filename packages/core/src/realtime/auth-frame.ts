import { WIRE_ERROR_MESSAGES, type WireError, type WireErrorCode } from './wire-frames.js';

/**
 * The auth frame: `{"type": "auth", "token": "<session token or JWT>" | null}`.
 *
 * @example
 * ```ts
 * const anonymous: AuthFrame = { type: 'auth', token: null };
 * ```
 */
export interface AuthFrame {
  readonly type: 'auth';
  readonly token: string | null;
}

/**
 * The answer to an auth frame.
 *
 * @example
 * ```ts
 * const answer: AuthReply = authReply(await dispatcher.admit({ ...ctx, credential: frame.token }));
 * ```
 */
export type AuthReply =
  | { readonly type: 'auth'; readonly ok: true }
  | { readonly type: 'auth'; readonly ok: false; readonly error: WireError };

const AUTH_OK: AuthReply = Object.freeze({ type: 'auth', ok: true });

/**
 * Reads an auth frame from a parsed message; undefined when it is not one
 * (not an object, `type` is not `auth`, or `token` is neither a string nor null).
 *
 * @example
 * ```ts
 * const frame = readAuthFrame(JSON.parse(text));
 * if (!frame) return socket.close();
 * ```
 */
export function readAuthFrame(raw: unknown): AuthFrame | undefined {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return undefined;
  const { type, token } = raw as Record<string, unknown>;
  if (type !== 'auth' || !('token' in raw)) return undefined;
  return typeof token === 'string' || token === null ? { type: 'auth', token } : undefined;
}

/**
 * The auth reply for a connection's admission, or for a wire error code (for
 * example `bad_request` when the first frame was not an auth frame).
 *
 * @example
 * ```ts
 * socket.send(JSON.stringify(authReply(admission)));
 * ```
 */
export function authReply(outcome: { readonly ok: true } | { readonly ok: false; readonly code: WireErrorCode; readonly message: string } | WireErrorCode): AuthReply {
  if (typeof outcome === 'string') return { type: 'auth', ok: false, error: { code: outcome, message: WIRE_ERROR_MESSAGES[outcome] } };
  if (outcome.ok) return AUTH_OK;
  return { type: 'auth', ok: false, error: { code: outcome.code, message: outcome.message } };
}
