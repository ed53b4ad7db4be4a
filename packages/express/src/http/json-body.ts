/**
 * The JSON body parser every portcullis route uses: strict, bounded, UTF-8.
 */
import express, { type RequestHandler } from 'express';

/**
 * Default largest JSON body: 16 KiB.
 *
 * @example
 * ```ts
 * app.post('/scores', jsonBody(DEFAULT_BODY_LIMIT), handler); // 16 KiB
 * ```
 */
export const DEFAULT_BODY_LIMIT = '16kb';

/**
 * Parses `application/json` bodies: only an object or array at the top level
 * (strict), at most `limit` bytes. Failures reach the error handler as
 * 400 (malformed), 413 (too large) or 415 (not UTF-8), never 500.
 *
 * @example
 * ```ts
 * app.post('/scores', jsonBody(), (req, res) => res.json(req.body));
 * ```
 */
export function jsonBody(limit: string | number = DEFAULT_BODY_LIMIT): RequestHandler {
  return express.json({ limit, strict: true, type: 'application/json' });
}
