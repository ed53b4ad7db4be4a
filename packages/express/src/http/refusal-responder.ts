/**
 * Answers a shield refusal in portcullis's error formats (docs/http-api.md): empty 401/403 with
 * `WWW-Authenticate: Bearer` by default, `{error, message}` under
 * `svc:errors:format = simple`, or whatever a registered challenge writer writes.
 */
import type { AuthContext, RefusalCode } from '@portcullis/core';
import type { Request, Response } from 'express';
import type { InjectionToken } from 'tsyringe';
import { sendError, setRetryAfter } from './error-handler.js';
import { HTTP_ERROR_TABLE } from './http-status-table.js';

/**
 * The two bearer-challenge refusals; `unavailable` is answered 503 and `rate_limited`
 * 429 with `Retry-After` in every format.
 *
 * @example
 * ```ts
 * const statusOf = (code: ChallengeCode) => (code === 'unauthorized' ? 401 : 403);
 * ```
 */
export type ChallengeCode = Extract<RefusalCode, 'unauthorized' | 'forbidden'>;

/**
 * What a {@link ChallengeWriter} receives besides the status.
 *
 * @example
 * ```ts
 * const writer: ChallengeWriter = ({ res, code, message }: ChallengeContext, status) => {
 *   res.status(status).json({ code, message });
 * };
 * ```
 */
export interface ChallengeContext {
  readonly req: Request;
  readonly res: Response;
  /** The transport-neutral context the shield decided on. */
  readonly auth: AuthContext;
  readonly code: ChallengeCode;
  /** A message safe to show to the client. */
  readonly message: string;
}

/**
 * Writes the response of a refused request in place of the default body. It
 * receives the request context and the status (401 or 403) and sets the status
 * itself; if it leaves the response open, it is ended after it returns.
 *
 * @example
 * ```ts
 * container.register(CHALLENGE_WRITER, { useValue: ({ res, code }, status) => {
 *   res.status(status).type('text/plain').send(code === 'unauthorized' ? 'log in first' : 'not for you');
 * } });
 * ```
 */
export type ChallengeWriter = (context: ChallengeContext, status: 401 | 403) => void | Promise<void>;

/**
 * Injection token under which an application registers its {@link ChallengeWriter}.
 *
 * @example
 * ```ts
 * container.register(CHALLENGE_WRITER, { useValue: ({ res }, status) => void res.status(status).send('log in first') });
 * ```
 */
export const CHALLENGE_WRITER: InjectionToken<ChallengeWriter> = Symbol.for('portcullis:express:challenge-writer');

/**
 * How refusals are written; resolved once per app.
 *
 * @example
 * ```ts
 * await respondRefusal(refusal, { format: 'simple', challengeWriter: undefined } satisfies RefusalFormat);
 * ```
 */
export interface RefusalFormat {
  /** `simple` sends `{error, message}`; `empty` sends no body. */
  readonly format: 'simple' | 'empty';
  readonly challengeWriter: ChallengeWriter | undefined;
}

/**
 * Writes one refusal with the status of the one HTTP table. `unavailable` is not a
 * challenge: it is 503 with `Retry-After` and `{error: 'unavailable', message}` whatever
 * the format; nor is `rate_limited`: 429 with `Retry-After` and `{error: 'rate_limited',
 * message}`. `Retry-After` is whole seconds, at least 1.
 *
 * @example
 * ```ts
 * await respondRefusal({ req, res, auth, code: 'unauthorized', message: 'a valid credential is required' }, { format: 'empty', challengeWriter: undefined });
 * ```
 */
export async function respondRefusal(
  refusal: Omit<ChallengeContext, 'code'> & { readonly code: RefusalCode; readonly retryAfterMs?: number },
  how: RefusalFormat,
): Promise<void> {
  const { res, code, message } = refusal;
  if (code === 'unavailable' || code === 'rate_limited') {
    // The enforcer's refusals of both codes name their hint; one that does not waits a second.
    setRetryAfter(res, (refusal.retryAfterMs ?? 1000) / 1000);
    sendError(res, HTTP_ERROR_TABLE[code].status, code, message);
    return;
  }
  const { status } = HTTP_ERROR_TABLE[code];
  if (how.challengeWriter) {
    await how.challengeWriter({ ...refusal, code }, status);
    if (!res.writableEnded) res.end();
    return;
  }
  if (status === 401) res.setHeader('WWW-Authenticate', 'Bearer');
  if (how.format === 'simple') {
    sendError(res, status, code, message);
    return;
  }
  res.status(status).end();
}
