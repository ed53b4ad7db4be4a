/**
 * What a password must be before bcrypt sees it, and what bcrypt is then given.
 */
import { createHash } from 'node:crypto';
import { PortcullisError } from '../errors/portcullis-error.js';

/**
 * `password:prehash`: `none` gives bcrypt the password itself, `sha384` its digest.
 *
 * @example
 * ```ts
 * const prehash: PasswordPrehash = config.security.password.prehash;
 * ```
 */
export type PasswordPrehash = 'none' | 'sha384';

const LONE_SURROGATE = /\p{Surrogate}/u;

/**
 * Counts Unicode code points (what a user types as characters; an emoji is one),
 * stopping once `limit` is passed so a huge string costs no more than `limit` steps.
 */
function codePointsUpTo(text: string, limit: number): number {
  if (text.length <= limit) return text.length;
  let count = 0;
  for (const _ of text) {
    if (++count > limit) break;
  }
  return count;
}

/**
 * Throws `PortcullisError('invalid_password')` unless `password` is a string of at
 * most `maxLength` characters (Unicode code points) that is well-formed UTF-16 (no
 * lone surrogate, which UTF-8 would turn into U+FFFD and so make distinct passwords
 * equal). The message never contains the password.
 *
 * @example
 * ```ts
 * assertPassword('correct horse', 1024); // passes
 * assertPassword(42, 1024); // throws PortcullisError, code 'invalid_password'
 * ```
 */
export function assertPassword(password: unknown, maxLength: number): asserts password is string {
  if (typeof password !== 'string') {
    throw new PortcullisError('invalid_password', `password must be a string, got ${password === null ? 'null' : typeof password}`);
  }
  if (codePointsUpTo(password, maxLength) > maxLength) {
    throw new PortcullisError('invalid_password', `password is longer than password:max-length (${maxLength} characters)`);
  }
  if (LONE_SURROGATE.test(password)) {
    throw new PortcullisError('invalid_password', 'password is not well-formed Unicode (it holds a lone surrogate)');
  }
}

/**
 * The text handed to bcrypt. With `sha384` it is the base64 SHA-384 digest of the
 * UTF-8 password (64 characters, under bcrypt's 72-byte limit and free of NUL), so
 * the whole password counts however long it is.
 *
 * @example
 * ```ts
 * bcryptInput('a'.repeat(100), 'sha384').length; // 64
 * bcryptInput('hunter2', 'none'); // 'hunter2'
 * ```
 */
export function bcryptInput(password: string, prehash: PasswordPrehash): string {
  return prehash === 'sha384' ? createHash('sha384').update(password, 'utf8').digest('base64') : password;
}
