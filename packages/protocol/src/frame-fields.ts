/**
 * Readers shared by the frame modules (not exported from the package): a plain JSON
 * object, and the `error` of a refusal reply with its code checked and its message
 * defaulted.
 */
import { isWireErrorCode, WIRE_ERROR_MESSAGES } from './error-codes.js';
import type { WireError } from './frames.js';

/** True for a JSON object (not null, not an array). */
export function isObject(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The `error` of a refusal reply: an unknown code reads as `unauthorized`, a missing message as the code's own. */
export function readWireError(raw: Readonly<Record<string, unknown>>): WireError {
  const error = isObject(raw['error']) ? raw['error'] : {};
  const code = isWireErrorCode(error['code']) ? error['code'] : 'unauthorized';
  const message = typeof error['message'] === 'string' ? error['message'] : WIRE_ERROR_MESSAGES[code];
  return { code, message };
}
