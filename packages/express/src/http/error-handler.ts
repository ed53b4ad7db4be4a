/**
 * The final error handler: every failure becomes `{error, message}` with a
 * precise status; nothing answers 500 for bad input, and no stack trace or
 * internal message ever reaches the client.
 */
import { describeError, OverloadedError, PortcullisError, type Logger } from '@portcullis/core';
import type { ErrorBody, ErrorCode } from '@portcullis/protocol';
import type { ErrorRequestHandler, Response } from 'express';
import { bodyErrorFor, HTTP_ERROR_TABLE, httpErrorFor } from './http-status-table.js';

/**
 * Sends `{error, message}` with `status`, unless a response is already under way.
 *
 * @example
 * ```ts
 * sendError(res, 400, 'invalid_request', 'score must be a number');
 * ```
 */
export function sendError(res: Response, status: number, error: ErrorCode, message: string): void {
  if (res.headersSent) return;
  res.status(status).json({ error, message } satisfies ErrorBody);
}

/** Sets `Retry-After` in whole seconds, at least 1, unless the response is already under way. */
export function setRetryAfter(res: Response, seconds: number): void {
  if (!res.headersSent) res.setHeader('Retry-After', String(Math.max(1, Math.ceil(seconds))));
}

/**
 * Sends one `PortcullisError` per the status table: an error with a retry time
 * (`LockedOutError`, `OverloadedError`, every `unavailable`) carries `Retry-After`;
 * server-side codes answer a fixed message.
 *
 * @example
 * ```ts
 * sendPortcullisError(res, new PortcullisError('conflict', 'username is taken')); // 409
 * sendPortcullisError(res, new OverloadedError('logins', 3)); // 503, Retry-After: 3
 * ```
 */
export function sendPortcullisError(res: Response, error: PortcullisError): void {
  const mapping = httpErrorFor(error.code);
  if (error.retryAfterSeconds !== undefined) setRetryAfter(res, error.retryAfterSeconds);
  sendError(res, mapping.status, mapping.wire, mapping.message ?? error.message);
}

function statusOf(error: unknown): number | undefined {
  const status = (error as { status?: unknown; statusCode?: unknown } | null)?.status ?? (error as { statusCode?: unknown } | null)?.statusCode;
  return typeof status === 'number' && status >= 400 && status < 600 ? status : undefined;
}

function describeForLog(error: unknown): Record<string, unknown> {
  const stack = (error as { stack?: unknown } | null)?.stack;
  // The stack starts with the message, which may quote user input over several lines; keep only the frames.
  const frames = typeof stack === 'string' ? stack.split('\n').filter((line) => /^\s+at /.test(line)).slice(0, 5).map((line) => line.trim()) : undefined;
  return { ...describeError(error), frames };
}

/**
 * Creates the final error handler of a portcullis app or route.
 *
 * @example
 * ```ts
 * app.use(portcullisErrorHandler(loggers.create('http')));
 * ```
 */
export function portcullisErrorHandler(log?: Logger): ErrorRequestHandler {
  return (error: unknown, req, res, next) => {
    if (res.headersSent) {
      next(error);
      return;
    }
    if (error instanceof PortcullisError) {
      // `overloaded` is an answer the server chose, and the service that chose it logs it, throttled.
      if (httpErrorFor(error.code).status >= 500 && !(error instanceof OverloadedError)) log?.error('request failed', { route: req.path, ...describeForLog(error) });
      sendPortcullisError(res, error);
      return;
    }
    const body = bodyErrorFor(error);
    const status = body?.status ?? statusOf(error);
    if (status !== undefined && status < 500) {
      sendError(res, status, 'invalid_request', body?.message ?? 'the request is malformed');
      return;
    }
    log?.error('request failed', { route: req.path, ...describeForLog(error) });
    sendError(res, HTTP_ERROR_TABLE.internal.status, 'internal', HTTP_ERROR_TABLE.internal.message);
  };
}
