/**
 * The tables of the express adapter, in one place: every `PortcullisError` code, and
 * so every shield refusal, and its HTTP answer (status, wire code, fixed message); and
 * every request-body failure of body-parser, answered `invalid_request`.
 */
import type { PortcullisErrorCode } from '@portcullis/core';
import { WIRE_ERROR_MESSAGES, type ErrorCode } from '@portcullis/protocol';

/**
 * How one error code is answered over HTTP.
 *
 * @example
 * ```ts
 * const { status, wire }: HttpErrorMapping = httpErrorFor(error.code);
 * ```
 */
export interface HttpErrorMapping {
  readonly status: number;
  /** The `error` field of the body. */
  readonly wire: ErrorCode;
  /** Fixed text sent instead of the error's message (for server-side failures). */
  readonly message?: string;
}

const INTERNAL = { status: 500, wire: 'internal', message: 'internal error' } as const;

/**
 * Every `PortcullisError` code and its HTTP answer. `invalid_password` (a
 * password too long or not a string) is input like any other: 400
 * `invalid_request`. Shield refusals are `unauthorized` (401), `forbidden` (403)
 * and `unavailable` (503); a `@RateLimit` refusal is `rate_limited` (429); a login or
 * signup refused for bcrypt's backlog is `overloaded` (503). Server-side codes answer a fixed message.
 *
 * @example
 * ```ts
 * HTTP_ERROR_TABLE.locked_out; // { status: 429, wire: 'locked_out' }
 * ```
 */
export const HTTP_ERROR_TABLE = Object.freeze({
  invalid_request: { status: 400, wire: 'invalid_request' },
  bad_request: { status: 400, wire: 'invalid_request' },
  invalid_password: { status: 400, wire: 'invalid_request' },
  captcha_failed: { status: 400, wire: 'captcha_failed' },
  invalid_credentials: { status: 401, wire: 'invalid_credentials' },
  invalid_token: { status: 401, wire: 'invalid_token' },
  unauthorized: { status: 401, wire: 'unauthorized' },
  forbidden: { status: 403, wire: 'forbidden' },
  not_found: { status: 404, wire: 'not_found' },
  conflict: { status: 409, wire: 'conflict' },
  locked_out: { status: 429, wire: 'locked_out' },
  rate_limited: { status: 429, wire: 'rate_limited', message: WIRE_ERROR_MESSAGES.rate_limited },
  unavailable: { status: 503, wire: 'unavailable', message: WIRE_ERROR_MESSAGES.unavailable },
  overloaded: { status: 503, wire: 'overloaded' },
  config_invalid: INTERNAL,
  key_rejected: INTERNAL,
  internal: INTERNAL,
} as const) satisfies Readonly<Record<PortcullisErrorCode, HttpErrorMapping>>;

/**
 * The mapping of a code; unknown codes are internal errors.
 *
 * @example
 * ```ts
 * httpErrorFor('conflict'); // { status: 409, wire: 'conflict' }
 * ```
 */
export function httpErrorFor(code: string): HttpErrorMapping {
  return Object.hasOwn(HTTP_ERROR_TABLE, code) ? HTTP_ERROR_TABLE[code as PortcullisErrorCode] : INTERNAL;
}

/** body-parser and http-errors failures, by `type`, answered as `invalid_request`. */
const BODY_ERROR_TABLE: Readonly<Record<string, { status: number; message: string }>> = {
  'entity.parse.failed': { status: 400, message: 'the request body is not valid JSON (an object or array is expected)' },
  'entity.too.large': { status: 413, message: 'the request body is too large' },
  'entity.verify.failed': { status: 400, message: 'the request body was refused' },
  'request.aborted': { status: 400, message: 'the request body was not received completely' },
  'request.size.invalid': { status: 400, message: 'the request body does not match its Content-Length' },
  'encoding.invalid': { status: 400, message: 'the request body is not valid UTF-8' },
  'charset.unsupported': { status: 415, message: 'the request body must be UTF-8 JSON' },
  'encoding.unsupported': { status: 415, message: 'the request body has an unsupported Content-Encoding' },
  'parameters.too.many': { status: 413, message: 'the request has too many parameters' },
  'stream.encoding.set': { status: HTTP_ERROR_TABLE.internal.status, message: HTTP_ERROR_TABLE.internal.message },
};

/**
 * The status and message of a request-body failure (body-parser's `type`), or undefined
 * for any other error.
 *
 * @example
 * ```ts
 * bodyErrorFor({ type: 'entity.too.large' }); // { status: 413, message: 'the request body is too large' }
 * ```
 */
export function bodyErrorFor(error: unknown): { readonly status: number; readonly message: string } | undefined {
  const type = (error as { type?: unknown } | null)?.type;
  return typeof type === 'string' && Object.hasOwn(BODY_ERROR_TABLE, type) ? BODY_ERROR_TABLE[type] : undefined;
}
