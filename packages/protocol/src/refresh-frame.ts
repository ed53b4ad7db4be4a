/**
 * The in-band refresh: on an authenticated connection the client sends
 * `{"type": "refresh", "token": …}` with its session refresh token and the server
 * answers with the new pair (the upgrade response's fields) or an error. The
 * connection goes on under the new pair.
 */
import { isObject, readWireError } from './frame-fields.js';
import type { WireError } from './frames.js';
import { readUpgradeResponse, type UpgradeResponse } from './http-bodies.js';

/**
 * The refresh frame: `{"type": "refresh", "token": "<session refresh token>"}`.
 *
 * @example
 * ```ts
 * const frame: RefreshFrame = { type: 'refresh', token: session.refreshToken };
 * socket.send(JSON.stringify(frame));
 * ```
 */
export interface RefreshFrame {
  readonly type: 'refresh';
  readonly token: string;
}

/**
 * The answer to a refresh frame. A refusal leaves the connection as it was.
 *
 * @example
 * ```ts
 * const refused: RefreshReply = { type: 'refresh', ok: false, error: { code: 'forbidden', message: 'not allowed' } };
 * ```
 */
export type RefreshReply =
  | ({ readonly type: 'refresh'; readonly ok: true } & UpgradeResponse)
  | { readonly type: 'refresh'; readonly ok: false; readonly error: WireError };

/**
 * Reads a refresh frame from a parsed message; undefined when it is not one
 * (`type` is not `refresh`). A refresh frame whose `token` is not a string reads
 * with an empty token, which the server refuses.
 *
 * @example
 * ```ts
 * const frame = readRefreshFrame(parseJsonFrame(message));
 * if (frame) answer(await refresh(frame.token));
 * ```
 */
export function readRefreshFrame(raw: unknown): RefreshFrame | undefined {
  if (!isObject(raw) || raw['type'] !== 'refresh') return undefined;
  const token = raw['token'];
  return { type: 'refresh', token: typeof token === 'string' ? token : '' };
}

/**
 * Reads a refresh answer; undefined when it is not one, or when `ok: true` lacks
 * the new pair. An unknown error code reads as `unauthorized`.
 *
 * @example
 * ```ts
 * const answer = readRefreshReply(parseJsonFrame(message));
 * if (answer?.ok) keep(answer.accessToken, answer.refreshToken);
 * ```
 */
export function readRefreshReply(raw: unknown): RefreshReply | undefined {
  if (!isObject(raw) || raw['type'] !== 'refresh' || typeof raw['ok'] !== 'boolean') return undefined;
  if (raw['ok']) {
    const pair = readUpgradeResponse(raw);
    return pair === undefined ? undefined : { ...raw, ...pair, type: 'refresh', ok: true };
  }
  return { type: 'refresh', ok: false, error: readWireError(raw) };
}
