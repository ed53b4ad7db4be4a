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

/**
 * Controls, format characters (zero-width spaces and joiners, bidi controls, the BOM,
 * soft hyphens), line and paragraph separators, private-use, unassigned and surrogate
 * code points: nothing a person types in a name, everything a look-alike hides behind.
 */
const HIDDEN = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Co}\p{Cn}\p{Cs}]/u;
/** Scripts whose letters pass for each other; one label (`@`/`.`-separated part) may use only one of them. */
const CONFUSABLE_SCRIPTS = [/\p{Script=Latin}/u, /\p{Script=Cyrillic}/u, /\p{Script=Greek}/u];

function mixesScripts(name: string): boolean {
  for (const label of name.split(/[@.]/)) {
    let scripts = 0;
    for (const script of CONFUSABLE_SCRIPTS) if (script.test(label)) scripts++;
    if (scripts > 1) return true;
  }
  return false;
}

/**
 * An account name as it is compared and stored: NFKC-normalised (compatibility forms
 * such as full-width letters, and letters written with combining marks, become the
 * one form) and trimmed. Refuses, with `invalid_request`, a name holding an invisible
 * or bidi character or a lone surrogate, and one whose label mixes Latin, Cyrillic
 * and Greek letters. Letters of one other script are kept as they are: NFKC does not
 * fold Cyrillic `а` into Latin `a`.
 *
 * @example
 * ```ts
 * normalizeAccountName('jose\u0301@example.com', 'email'); // 'jos\u00E9@example.com'
 * normalizeAccountName('p\u0430ypal@example.com', 'email'); // throws invalid_request
 * ```
 */
export function normalizeAccountName(value: string, field: 'email' | 'username'): string {
  const name = value.normalize('NFKC').trim();
  if (HIDDEN.test(name)) refuse(`${field} must not contain control, invisible or bidi characters, or lone surrogates`);
  if (mixesScripts(name)) refuse(`${field} must not mix Latin, Cyrillic or Greek letters in one part`);
  return name;
}

/**
 * The normalised username ({@link normalizeAccountName}), or `invalid_request`.
 *
 * @example
 * ```ts
 * checkUsername(' ada '); // 'ada'
 * ```
 */
export function checkUsername(value: unknown): string {
  if (typeof value !== 'string') refuse('username must be a string');
  const username = normalizeAccountName(value, 'username');
  if (!USERNAME_PATTERN.test(username)) refuse('username must be 3 to 32 letters, digits, "_", "." or "-"');
  return username;
}

/**
 * The normalised email ({@link normalizeAccountName}), or `invalid_request`.
 *
 * @example
 * ```ts
 * checkEmail(' ada@example.com '); // 'ada@example.com'
 * ```
 */
export function checkEmail(value: unknown): string {
  if (typeof value !== 'string') refuse('email must be a string');
  const email = normalizeAccountName(value, 'email');
  if (email.length > MAX_EMAIL_LENGTH || !EMAIL_PATTERN.test(email)) refuse('email must be an email address');
  return email;
}

/** A login name of either kind, normalised as at signup: a non-empty string of at most 254 characters. */
export function checkLoginName(value: unknown, field: 'email' | 'username'): string {
  if (typeof value !== 'string') refuse(`${field} must be a string`);
  const name = normalizeAccountName(value, field);
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
