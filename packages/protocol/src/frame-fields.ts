/**
 * Readers shared by the frame modules (not exported from the package): a plain JSON
 * object, and the `error` of a refusal reply with its code checked and its message
 * defaulted.
 */
import { isWireErrorCode } from './error-codes.js';
import { wireError, type WireError } from './frames.js';

/** True for a JSON object (not null, not an array). */
export function isObject(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The `error` of a refusal reply: an unknown code reads as `unauthorized`, a missing message
 * as the code's own; a `retryAfterMs` is kept when it is a number of milliseconds (≥ 0).
 */
export function readWireError(raw: Readonly<Record<string, unknown>>): WireError {
  const error = isObject(raw['error']) ? raw['error'] : {};
  const code = isWireErrorCode(error['code']) ? error['code'] : 'unauthorized';
  const message = typeof error['message'] === 'string' ? error['message'] : undefined;
  const retryAfterMs = error['retryAfterMs'];
  return wireError(code, message, typeof retryAfterMs === 'number' && Number.isFinite(retryAfterMs) && retryAfterMs >= 0 ? retryAfterMs : undefined);
}
