/**
 * The JSON body parser every portcullis route uses: strict, bounded, UTF-8.
 */
import { isUtf8 } from 'node:buffer';
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
 * (strict), at most `limit` bytes, valid UTF-8 (a body with an invalid byte
 * sequence is refused, not decoded with replacement characters). Failures reach
 * the error handler as 400 (malformed or invalid UTF-8), 413 (too large) or 415
 * (another charset), never 500.
 *
 * @example
 * ```ts
 * app.post('/scores', jsonBody(), (req, res) => res.json(req.body));
 * ```
 */
export function jsonBody(limit: string | number = DEFAULT_BODY_LIMIT): RequestHandler {
  return express.json({ limit, strict: true, type: 'application/json', verify: refuseInvalidUtf8 });
}

function refuseInvalidUtf8(_req: unknown, _res: unknown, body: Buffer): void {
  if (!isUtf8(body)) throw Object.assign(new Error('the request body is not valid UTF-8'), { type: 'encoding.invalid' });
}
