/**
 * The real-time frames: a request, its reply, and the push frames a server
 * sends on its own. Every transport carries exactly these shapes.
 */
import { WIRE_ERROR_MESSAGES, type WireErrorCode } from './error-codes.js';

/**
 * A request frame: `{ id, portal, gate, data }`; over UDP also `token`.
 *
 * @example
 * ```ts
 * const request: GateRequest = { id: 1, portal: '/game', gate: 'move', data: { x: 1, y: 2 } };
 * ```
 */
export interface GateRequest {
  readonly id: number;
  readonly portal: string;
  readonly gate: string;
  readonly data?: unknown;
  /** UDP only: the credential of this datagram. */
  readonly token?: string;
}

/**
 * The `error` member of a failed reply.
 *
 * @example
 * ```ts
 * const error: WireError = { code: 'forbidden', message: WIRE_ERROR_MESSAGES.forbidden };
 * ```
 */
export interface WireError {
  readonly code: WireErrorCode;
  readonly message: string;
  /** With `rate_limited`, `overloaded` or `unavailable`: milliseconds (whole) to wait before sending that request again. */
  readonly retryAfterMs?: number;
}

/**
 * A reply frame. `id` repeats the request's; it is `null` only when the request
 * had no usable numeric id (bad JSON, not an object).
 *
 * @example
 * ```ts
 * const done: GateReply = { id: 7, ok: true, data: 'pong' };
 * const refused: GateReply = { id: 8, ok: false, error: { code: 'not_found', message: 'no such portal or gate' } };
 * ```
 */
export type GateReply =
  | { readonly id: number; readonly ok: true; readonly data: unknown }
  | { readonly id: number | null; readonly ok: false; readonly error: WireError };

/**
 * A frame the server sends on its own: any object with a `type` (other than
 * `auth`) and no `id`/`ok` pair; the application chooses the rest.
 *
 * @example
 * ```ts
 * const push: PushFrame = { type: 'event', data: 'match found' };
 * registry.sendToPrincipal('player-42', push);
 * ```
 */
export interface PushFrame {
  readonly type: string;
  readonly [member: string]: unknown;
}

/**
 * What an inbound frame of a server is: a `reply` to a request, an `auth` answer,
 * or a `push`.
 *
 * @example
 * ```ts
 * const kind: FrameKind = frameKind(frame);
 * ```
 */
export type FrameKind = 'reply' | 'auth' | 'refresh' | 'push';

/**
 * Tells a reply (an `id`, numeric or null, and a boolean `ok`), an auth answer
 * (`type: "auth"`), a refresh answer (`type: "refresh"`) and a push (anything else,
 * typically with its own `type`) apart.
 *
 * @example
 * ```ts
 * frameKind({ id: 1, ok: true, data: 'pong' });       // 'reply'
 * frameKind({ type: 'auth', ok: true });               // 'auth'
 * frameKind({ type: 'refresh', ok: false, error });    // 'refresh'
 * frameKind({ type: 'event', data: 'match found' });   // 'push'
 * ```
 */
export function frameKind(frame: Readonly<Record<string, unknown>>): FrameKind {
  const { type } = frame;
  if (typeof type === 'string') return type === 'auth' || type === 'refresh' ? type : 'push';
  const { id } = frame;
  return (typeof id === 'number' || id === null) && typeof frame['ok'] === 'boolean' ? 'reply' : 'push';
}

/**
 * Builds the error of a failed reply (a gate's, an auth frame's, a refresh frame's);
 * `message` defaults to the code's fixed text. A `retryAfterMs` (for `rate_limited`,
 * `overloaded`, `unavailable`) is added as a whole number of milliseconds.
 *
 * @example
 * ```ts
 * wireError('unavailable', undefined, 999.2); // { code: 'unavailable', message: '…', retryAfterMs: 1000 }
 * ```
 */
export function wireError(code: WireErrorCode, message: string = WIRE_ERROR_MESSAGES[code], retryAfterMs?: number): WireError {
  return retryAfterMs === undefined ? { code, message } : { code, message, retryAfterMs: Math.max(0, Math.ceil(retryAfterMs)) };
}

/**
 * Builds a failed reply; its error is {@link wireError}'s.
 *
 * @example
 * ```ts
 * errorReply(null, 'bad_request');
 * errorReply(7, 'overloaded', undefined, 500); // {"id":7,"ok":false,"error":{"code":"overloaded",…,"retryAfterMs":500}}
 * errorReply(7, 'rate_limited', undefined, 250); // error: { code: 'rate_limited', message, retryAfterMs: 250 }
 * ```
 */
export function errorReply(id: number | null, code: WireErrorCode, message?: string, retryAfterMs?: number): GateReply {
  return { id, ok: false, error: wireError(code, message, retryAfterMs) };
}

/**
 * Serialises a reply to JSON text. A handler result that JSON cannot represent
 * (a BigInt, a cycle) becomes an `internal` reply for the same id instead of a throw.
 *
 * @example
 * ```ts
 * socket.send(encodeReply(await dispatcher.dispatchText(text, conn)));
 * ```
 */
export function encodeReply(reply: GateReply): string {
  const text = usualRefusal(reply);
  if (text !== undefined) return text;
  try {
    return JSON.stringify(reply);
  } catch {
    return JSON.stringify(errorReply(reply.id, 'internal'));
  }
}

/** The start of each code's error object with its fixed message, as `JSON.stringify` writes it. */
const ERROR_HEADS = new Map(Object.entries(WIRE_ERROR_MESSAGES).map(([code, message]) => [code, { message, json: `{"code":${JSON.stringify(code)},"message":${JSON.stringify(message)}` }]));

/**
 * A failed reply as `errorReply` builds it (keys `id`, `ok`, `error` in that order; an error of
 * `code` and its fixed `message`, and a whole-number `retryAfterMs` or none), written from text:
 * the bytes `JSON.stringify` writes, without walking the object. A server that sheds load writes
 * thousands of these a second, and shedding must cost less than answering. Undefined for any
 * other reply, which `JSON.stringify` writes.
 */
function usualRefusal(reply: GateReply): string | undefined {
  if (reply.ok !== false) return undefined;
  const { id, error } = reply as { id: unknown; error: unknown };
  if (typeof error !== 'object' || error === null || !hasKeys(reply, REPLY_KEYS)) return undefined;
  if ((reply as { toJSON?: unknown }).toJSON !== undefined || (error as { toJSON?: unknown }).toJSON !== undefined) return undefined;
  if (id !== null && !(typeof id === 'number' && Number.isFinite(id))) return undefined;
  const { code, message, retryAfterMs } = error as Partial<WireError>;
  const head = ERROR_HEADS.get(code as string);
  if (head === undefined || message !== head.message) return undefined;
  if (hasKeys(error, ERROR_KEYS)) return `{"id":${id},"ok":false,"error":${head.json}}}`;
  if (!hasKeys(error, HINTED_ERROR_KEYS) || !Number.isSafeInteger(retryAfterMs)) return undefined;
  return `{"id":${id},"ok":false,"error":${head.json},"retryAfterMs":${retryAfterMs}}}`;
}

const REPLY_KEYS = ['id', 'ok', 'error'];
const ERROR_KEYS = ['code', 'message'];
const HINTED_ERROR_KEYS = ['code', 'message', 'retryAfterMs'];

/** Whether `object`'s own enumerable keys are exactly `keys`, in that order (the order `JSON.stringify` writes them in). */
function hasKeys(object: object, keys: readonly string[]): boolean {
  const own = Object.keys(object);
  if (own.length !== keys.length) return false;
  for (let i = 0; i < keys.length; i++) if (own[i] !== keys[i]) return false;
  return true;
}
