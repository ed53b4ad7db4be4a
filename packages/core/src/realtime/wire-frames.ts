/**
 * The real-time wire contract (docs/protocol.md): request and reply frames, error codes
 * and their client-safe messages. Every transport sends exactly these shapes.
 */

/**
 * Reply error codes. `unavailable` is portcullis's addition to the basic list: the
 * credential could not be checked because the session store is down (fail closed).
 *
 * @example
 * ```ts
 * const code: WireErrorCode = 'not_found';
 * socket.send(encodeReply(errorReply(request.id, code)));
 * ```
 */
export type WireErrorCode = 'unauthorized' | 'forbidden' | 'not_found' | 'bad_request' | 'internal' | 'unavailable';

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
}

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
  readonly token?: string;
}

/**
 * A reply frame. `id` repeats the request's; it is `null` only when the request
 * had no usable numeric id (bad JSON, not an object).
 *
 * @example
 * ```ts
 * { id: 7, ok: true, data: 'pong' }
 * { id: 8, ok: false, error: { code: 'not_found', message: 'no such portal or gate' } }
 * ```
 */
export type GateReply =
  | { readonly id: number; readonly ok: true; readonly data: unknown }
  | { readonly id: number | null; readonly ok: false; readonly error: WireError };

/**
 * The fixed, client-safe message of each code.
 *
 * @example
 * ```ts
 * WIRE_ERROR_MESSAGES.not_found; // 'no such portal or gate'
 * ```
 */
export const WIRE_ERROR_MESSAGES: Readonly<Record<WireErrorCode, string>> = Object.freeze({
  unauthorized: 'a valid credential is required',
  forbidden: 'the principal is not allowed here',
  not_found: 'no such portal or gate',
  bad_request: 'a request is a JSON object {"id": <number>, "portal": <string>, "gate": <string>, "data": <any>}',
  internal: 'the gate failed',
  unavailable: 'authentication is temporarily unavailable',
});

/**
 * Builds a failed reply; `message` defaults to the code's fixed text.
 *
 * @example
 * ```ts
 * errorReply(null, 'bad_request');
 * ```
 */
export function errorReply(id: number | null, code: WireErrorCode, message: string = WIRE_ERROR_MESSAGES[code]): GateReply {
  return { id, ok: false, error: { code, message } };
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
  try {
    return JSON.stringify(reply);
  } catch {
    return JSON.stringify(errorReply(reply.id, 'internal'));
  }
}
