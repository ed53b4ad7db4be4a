/**
 * Recognises a stored bcrypt hash the native binding will really compute. The
 * binding answers a malformed hash in microseconds and a real one in the full
 * bcrypt time, so anything it would answer quickly must never reach it.
 */

/** `$2a$`/`$2b$`/`$2y$`, a two-digit cost 04..31, 22 salt and 31 hash characters. */
const BCRYPT_HASH = /^\$2([aby])\$(0[4-9]|[12][0-9]|3[01])\$[./A-Za-z0-9]{53}$/;

/**
 * Returns the hash in the form the `bcrypt` package computes (PHP's `$2y$` is the
 * same algorithm as `$2b$`, which the binding refuses under its own name), or
 * undefined when the value is not a well-formed bcrypt hash.
 *
 * @example
 * ```ts
 * normaliseBcryptHash('$2y$10$' + 'a'.repeat(53)); // '$2b$10$aaa…'
 * normaliseBcryptHash('$2b$32$' + 'a'.repeat(53)); // undefined (cost out of range)
 * normaliseBcryptHash(null); // undefined
 * ```
 */
export function normaliseBcryptHash(hash: unknown): string | undefined {
  if (typeof hash !== 'string') return undefined;
  const match = BCRYPT_HASH.exec(hash);
  if (!match) return undefined;
  return match[1] === 'y' ? `$2b$${hash.slice(4)}` : hash;
}
