/**
 * The auth frame a client sends first (`{"type": "auth", "token": …}`) and the
 * server's answer, with a pure reader for each side.
 */
import { isObject, readWireError } from './frame-fields.js';
import type { WireError } from './frames.js';

/**
 * The auth frame: `{"type": "auth", "token": "<session token or JWT>" | null}`.
 *
 * @example
 * ```ts
 * const anonymous: AuthFrame = { type: 'auth', token: null };
 * socket.send(JSON.stringify(anonymous));
 * ```
 */
export interface AuthFrame {
  readonly type: 'auth';
  readonly token: string | null;
}

/**
 * The answer to an auth frame. `ok: false` is always followed by the server
 * closing the connection; it is also sent when a live credential is revoked.
 *
 * @example
 * ```ts
 * const accepted: AuthReply = { type: 'auth', ok: true };
 * const refused: AuthReply = { type: 'auth', ok: false, error: { code: 'unauthorized', message: 'the credential was revoked' } };
 * ```
 */
export type AuthReply =
  | { readonly type: 'auth'; readonly ok: true }
  | { readonly type: 'auth'; readonly ok: false; readonly error: WireError };

/**
 * Reads an auth frame from a parsed message; undefined when it is not one
 * (not an object, `type` is not `auth`, or `token` is neither a string nor null).
 *
 * @example
 * ```ts
 * const frame = readAuthFrame(parseJsonFrame(message));
 * if (!frame) return socket.close();
 * ```
 */
export function readAuthFrame(raw: unknown): AuthFrame | undefined {
  if (!isObject(raw)) return undefined;
  const { type, token } = raw;
  if (type !== 'auth' || !('token' in raw)) return undefined;
  return typeof token === 'string' || token === null ? { type: 'auth', token } : undefined;
}

/**
 * Reads an auth answer from a parsed message; undefined when it is not one (no
 * `type: "auth"` with a boolean `ok`). A refusal is a refusal whatever its
 * `error` holds: a code the reader does not know reads as `unauthorized`, a
 * missing message as the code's fixed text.
 *
 * @example
 * ```ts
 * const answer = readAuthReply(parseJsonFrame(message));
 * if (answer?.ok === false) console.log(answer.error.code); // 'unauthorized'
 * ```
 */
export function readAuthReply(raw: unknown): AuthReply | undefined {
  if (!isObject(raw) || raw['type'] !== 'auth' || typeof raw['ok'] !== 'boolean') return undefined;
  if (raw['ok']) return { type: 'auth', ok: true };
  return { type: 'auth', ok: false, error: readWireError(raw) };
}
