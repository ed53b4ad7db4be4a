/**
 * What signup and login accept as usernames, emails and passwords. Every
 * refusal is `PortcullisError('invalid_request')` naming the field, never its value.
 */
import { PortcullisError } from '../errors/portcullis-error.js';

/**
 * Usernames: 3 to 32 of letters, digits, `_`, `.` and `-` (never `@`, so never an email).
 *
 * @example
 * ```ts
 * USERNAME_PATTERN.test('ada_lovelace');     // true
 * USERNAME_PATTERN.test('ada@example.com'); // false
 * ```
 */
export const USERNAME_PATTERN = /^[A-Za-z0-9_.-]{3,32}$/;
const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const MAX_EMAIL_LENGTH = 254;

function refuse(message: string): never {
  throw new PortcullisError('invalid_request', message);
}

/** The trimmed username, or `invalid_request`. */
export function checkUsername(value: unknown): string {
  if (typeof value !== 'string') refuse('username must be a string');
  const username = value.trim();
  if (!USERNAME_PATTERN.test(username)) refuse('username must be 3 to 32 letters, digits, "_", "." or "-"');
  return username;
}

/** The trimmed email, or `invalid_request`. */
export function checkEmail(value: unknown): string {
  if (typeof value !== 'string') refuse('email must be a string');
  const email = value.trim();
  if (email.length > MAX_EMAIL_LENGTH || !EMAIL_PATTERN.test(email)) refuse('email must be an email address');
  return email;
}

/** A login name of either kind: a non-empty string of at most 254 characters. */
export function checkLoginName(value: unknown, field: 'email' | 'username'): string {
  if (typeof value !== 'string') refuse(`${field} must be a string`);
  const name = value.trim();
  if (name.length === 0 || name.length > MAX_EMAIL_LENGTH) refuse(`${field} must be 1 to ${MAX_EMAIL_LENGTH} characters`);
  return name;
}

function codePoints(text: string, stopAfter: number): number {
  let count = 0;
  for (const _ of text) if (++count > stopAfter) break;
  return count;
}

/** The bytes of a password bcrypt reads; it ignores everything after them. */
export const BCRYPT_MAX_BYTES = 72;

/**
 * A password of `min` to `max` characters (code points), or `invalid_request`; with
 * `maxBytes`, also at most that many bytes in UTF-8 (signup without a prehash, so that
 * bcrypt never drops the end of a password silently).
 * Login passes `min = 1`: a policy change must not lock out older accounts.
 */
export function checkPassword(value: unknown, min: number, max: number, maxBytes?: number): string {
  if (typeof value !== 'string') refuse('password must be a string');
  const length = codePoints(value, max);
  if (length < min) refuse(`password must be at least ${min} characters`);
  if (length > max) refuse(`password must be at most ${max} characters`);
  if (maxBytes !== undefined && Buffer.byteLength(value, 'utf8') > maxBytes) {
    refuse(`password must be at most ${maxBytes} bytes in UTF-8 (password:prehash = sha384 lifts this limit)`);
  }
  return value;
}

/** An optional captcha token: a string when present. */
export function checkCaptchaToken(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') refuse('captchaToken must be a string');
  return value;
}
