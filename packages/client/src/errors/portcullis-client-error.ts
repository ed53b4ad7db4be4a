/**
 * The one error type of the client. `code` mirrors the server's codes (HTTP and
 * real-time) plus a few the client raises itself; `status` is the HTTP status
 * when the error came from an HTTP answer.
 */
import { isErrorCode, type ErrorCode } from '@portcullis/protocol';

/**
 * Codes the server answers over HTTP (docs/http-api.md) and on real-time replies:
 * the protocol's `ErrorCode`.
 *
 * @example
 * ```ts
 * if (isPortcullisClientError(error, 'conflict' satisfies PortcullisServerErrorCode)) askForAnotherName();
 * ```
 */
export type PortcullisServerErrorCode = ErrorCode;

/**
 * Codes the client raises without a server answer.
 *
 * @example
 * ```ts
 * if (isPortcullisClientError(error, 'timeout' satisfies PortcullisLocalErrorCode)) await retry();
 * ```
 */
export type PortcullisLocalErrorCode =
  /** fetch or the socket failed: server down, DNS, refused connection. */
  | 'network_error'
  /** no reply within the request or handshake timeout. */
  | 'timeout'
  /** the connection closed (or was closed) before the reply came. */
  | 'connection_closed'
  /** the client holds no token that could do this, and no `reauthenticate` hook got one. */
  | 'not_authenticated'
  /** the server answered something that does not follow the wire contract. */
  | 'unexpected_response';

/**
 * Every code a {@link PortcullisClientError} can carry.
 *
 * @example
 * ```ts
 * const code: PortcullisClientErrorCode = isPortcullisClientError(error) ? error.code : 'network_error';
 * ```
 */
export type PortcullisClientErrorCode = PortcullisServerErrorCode | PortcullisLocalErrorCode;

/**
 * Tells whether a wire code is one the client knows (the protocol's `isErrorCode`).
 *
 * @example
 * ```ts
 * isServerErrorCode('conflict'); // true
 * ```
 */
export function isServerErrorCode(code: unknown): code is PortcullisServerErrorCode {
  return isErrorCode(code);
}

/**
 * Extra, safe facts carried by a {@link PortcullisClientError}.
 *
 * @example
 * ```ts
 * if (isPortcullisClientError(error, 'locked_out')) showRetryIn(error.retryAfterSeconds);
 * ```
 */
export interface PortcullisClientErrorDetails {
  /** HTTP status of the answer, when there was one. */
  readonly status?: number;
  /** Seconds from `Retry-After` (429 `locked_out`, 429 `rate_limited`, 503 `overloaded` and `unavailable`). */
  readonly retryAfterSeconds?: number;
  /** Milliseconds until a request may pass again: a `rate_limited`, `overloaded` or `unavailable` reply's hint, or `Retry-After` in ms. */
  readonly retryAfterMs?: number;
  readonly cause?: unknown;
}

/**
 * A refused or failed call. Match on `code`, never on `message`; messages never
 * hold a token or a password.
 *
 * @example
 * ```ts
 * try { await client.loginWithUsername('alice', 'wrong'); } catch (e) {
 *   if (e instanceof PortcullisClientError && e.code === 'invalid_credentials') showLoginError();
 *   if (e instanceof PortcullisClientError && e.code === 'locked_out') wait(e.retryAfterSeconds);
 *   if (e instanceof PortcullisClientError && e.code === 'rate_limited') slowDown(e.retryAfterMs);
 * }
 * ```
 */
export class PortcullisClientError extends Error {
  readonly code: PortcullisClientErrorCode;
  /** HTTP status, or `undefined` for real-time replies and local failures. */
  readonly status: number | undefined;
  readonly retryAfterSeconds: number | undefined;
  /** With `rate_limited`, `overloaded` and `unavailable` (and `locked_out` over HTTP): milliseconds until the caller may try again. */
  readonly retryAfterMs: number | undefined;

  constructor(code: PortcullisClientErrorCode, message: string, details: PortcullisClientErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = 'PortcullisClientError';
    this.code = code;
    this.status = details.status;
    this.retryAfterSeconds = details.retryAfterSeconds ?? (details.retryAfterMs === undefined ? undefined : Math.ceil(details.retryAfterMs / 1000));
    this.retryAfterMs = details.retryAfterMs ?? (details.retryAfterSeconds === undefined ? undefined : details.retryAfterSeconds * 1000);
  }
}

/**
 * Tells whether `error` is a {@link PortcullisClientError}, optionally with one of `codes`.
 *
 * @example
 * ```ts
 * if (isPortcullisClientError(e, 'timeout', 'connection_closed')) retryLater();
 * ```
 */
export function isPortcullisClientError(error: unknown, ...codes: PortcullisClientErrorCode[]): error is PortcullisClientError {
  return error instanceof PortcullisClientError && (codes.length === 0 || codes.includes(error.code));
}
