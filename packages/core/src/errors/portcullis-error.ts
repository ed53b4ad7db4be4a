/**
 * The one error type of portcullis. Adapters map `code` to an HTTP status or a
 * wire error code through a single table each; nothing matches on messages.
 */
import type { PortcullisErrorCode, TokenFailureReason } from './error-codes.js';

/**
 * How long a client is told to wait before it tries a refused `unavailable` request again (a
 * store that cannot be reached, or has too much queued already): the real-time reply carries
 * it as `retryAfterMs`, HTTP answers 503 with `Retry-After: 1`.
 */
export const UNAVAILABLE_RETRY_AFTER_MS = 1000;

/**
 * The retry hint, in milliseconds, of a refusal of `code` that names none:
 * {@link UNAVAILABLE_RETRY_AFTER_MS} for `unavailable`, none for any other code. The one
 * place that rule lives: errors, the fixed refusals and frame errors read it here.
 *
 * @example
 * ```ts
 * wireError(code, message, retryAfterMs ?? defaultRetryAfterMs(code)); // unavailable: 1000
 * ```
 */
export function defaultRetryAfterMs(code: string): number | undefined {
  return code === 'unavailable' ? UNAVAILABLE_RETRY_AFTER_MS : undefined;
}

/**
 * Base error with a closed `code`, an optional `cause` and, for a refusal worth trying again,
 * `retryAfterSeconds` (every `unavailable` has one second unless it says otherwise). Adapters
 * send it as `Retry-After` or `retryAfterMs`. Messages never hold a token, password, hash or key.
 *
 * @example
 * ```ts
 * try { loadConfig(); } catch (e) {
 *   if (e instanceof PortcullisError && e.code === 'config_invalid') process.exit(1);
 * }
 * ```
 */
export class PortcullisError extends Error {
  readonly code: PortcullisErrorCode;
  readonly retryAfterSeconds: number | undefined;

  constructor(code: PortcullisErrorCode, message: string, options?: { cause?: unknown; retryAfterSeconds?: number }) {
    super(message, options);
    this.name = 'PortcullisError';
    this.code = code;
    const defaultMs = defaultRetryAfterMs(code);
    this.retryAfterSeconds = options?.retryAfterSeconds ?? (defaultMs === undefined ? undefined : defaultMs / 1000);
  }
}

/**
 * The retry hint, in milliseconds, of an error answered with `code`: the `retryAfterSeconds` of
 * a `PortcullisError` of that code (every `unavailable` has one); undefined for anything else,
 * so a hint never rides on a code the error was mapped to (a `locked_out` answered `internal`).
 *
 * @example
 * ```ts
 * const code = replyCodeOf(error);
 * return errorReply(id, code, undefined, retryAfterMsOf(error, code)); // unavailable: retryAfterMs 1000
 * ```
 */
export function retryAfterMsOf(error: unknown, code: string): number | undefined {
  return error instanceof PortcullisError && error.code === code && error.retryAfterSeconds !== undefined ? error.retryAfterSeconds * 1000 : undefined;
}

/**
 * A refused token. `reason` is safe to log; the token itself is never kept.
 *
 * @example
 * ```ts
 * if (err instanceof TokenError && err.reason === 'expired') await client.refresh();
 * ```
 */
export class TokenError extends PortcullisError {
  readonly reason: TokenFailureReason;

  constructor(reason: TokenFailureReason, message = `token refused: ${reason}`, options?: { cause?: unknown }) {
    super('invalid_token', message, options);
    this.name = 'TokenError';
    this.reason = reason;
  }
}

/**
 * A setting that stops start-up. `key` is the full setting path, e.g.
 * `svc:security:password:work-factor`.
 *
 * @example
 * ```ts
 * new ConfigError('svc:security:mode', 'must be "jwt"');
 * ```
 */
export class ConfigError extends PortcullisError {
  readonly key: string;

  constructor(key: string, problem: string) {
    super('config_invalid', `invalid setting ${key}: ${problem}`);
    this.name = 'ConfigError';
    this.key = key;
  }
}

/**
 * A request refused at once because the server has more of that work waiting than it
 * can finish in time (code `overloaded`): try again after `retryAfterSeconds`. HTTP
 * answers 503 with `Retry-After`. portcullis counted and changed nothing for the request
 * (an app hook that runs before the refusal, such as `onSignup`, may have run).
 *
 * @example
 * ```ts
 * if (err instanceof OverloadedError) res.set('Retry-After', String(err.retryAfterSeconds));
 * ```
 */
export class OverloadedError extends PortcullisError {
  declare readonly retryAfterSeconds: number;

  constructor(what: string, retryAfterSeconds: number) {
    const seconds = Math.max(1, Math.ceil(retryAfterSeconds));
    super('overloaded', `too many ${what} waiting; try again in ${seconds} s`, { retryAfterSeconds: seconds });
    this.name = 'OverloadedError';
  }
}
