/**
 * The one list of error codes a client can receive, over HTTP (`{"error": code}`)
 * or in a real-time reply, the subset real-time replies use, and the fixed,
 * client-safe message of each real-time code. Every other code union of
 * portcullis is a named subset of this list.
 */

/**
 * Every code a portcullis server puts on the wire, in one list.
 *
 * @example
 * ```ts
 * for (const code of ERROR_CODES) console.log(code); // 'invalid_request', …, 'internal'
 * ```
 */
export const ERROR_CODES = Object.freeze([
  'invalid_request',
  'invalid_credentials',
  'invalid_token',
  'captcha_failed',
  'conflict',
  'locked_out',
  'unauthorized',
  'forbidden',
  'not_found',
  'bad_request',
  'unavailable',
  'rate_limited',
  'overloaded',
  'internal',
] as const);

/**
 * A code of {@link ERROR_CODES}: the `error` of an HTTP error body, or the
 * `error.code` of a failed real-time reply.
 *
 * @example
 * ```ts
 * const code: ErrorCode = 'locked_out';
 * ```
 */
export type ErrorCode = (typeof ERROR_CODES)[number];

const KNOWN_CODES: ReadonlySet<unknown> = new Set(ERROR_CODES);

/**
 * True for a code of {@link ERROR_CODES}; a client treats any other code as a
 * failure it does not know.
 *
 * @example
 * ```ts
 * const code = isErrorCode(body.error) ? body.error : 'internal';
 * ```
 */
export function isErrorCode(value: unknown): value is ErrorCode {
  return KNOWN_CODES.has(value);
}

/**
 * The codes a real-time reply (and an auth reply) carries. `unavailable` means the
 * credential could not be checked because a backing store is down or has too much
 * waiting (fail closed), and a reply's `error.retryAfterMs` says when to try again;
 * `rate_limited` means the caller sent more than the gate's `@RateLimit` allows in
 * its window, and the reply's `error.retryAfterMs` says when to send again;
 * `overloaded` means the server was too far behind to run the gate and refused it
 * unrun (the reply's `retryAfterMs` says when to try again).
 *
 * @example
 * ```ts
 * const code: WireErrorCode = 'not_found';
 * socket.send(encodeReply(errorReply(request.id, code)));
 * ```
 */
export type WireErrorCode = Extract<ErrorCode, 'unauthorized' | 'forbidden' | 'not_found' | 'bad_request' | 'internal' | 'unavailable' | 'rate_limited' | 'overloaded'>;

/**
 * The fixed, client-safe message of each real-time code; the one message table.
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
  rate_limited: 'too many requests; retry later',
  overloaded: 'the server is overloaded; the gate was not run',
});

/**
 * True for a code a real-time reply may carry.
 *
 * @example
 * ```ts
 * const code = isWireErrorCode(error.code) ? error.code : 'internal';
 * ```
 */
export function isWireErrorCode(value: unknown): value is WireErrorCode {
  return typeof value === 'string' && Object.hasOwn(WIRE_ERROR_MESSAGES, value);
}
