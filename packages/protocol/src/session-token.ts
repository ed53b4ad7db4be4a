/**
 * The shape of a session token, `<uuid v4>;session`: checked strictly before any
 * lookup, so an attacker-chosen string never reaches a store.
 */

/**
 * The suffix every session token carries: `<uuid v4>;session`.
 *
 * @example
 * ```ts
 * token.endsWith(SESSION_TOKEN_SUFFIX); // a session token, or something that pretends to be one
 * ```
 */
export const SESSION_TOKEN_SUFFIX = ';session';

/**
 * Length of every session token: a 36-character UUID and the `;session` suffix.
 *
 * @example
 * ```ts
 * SESSION_TOKEN_LENGTH; // 44
 * ```
 */
export const SESSION_TOKEN_LENGTH = 36 + SESSION_TOKEN_SUFFIX.length;

const SESSION_TOKEN = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12};session$/;

/**
 * True only for the exact shape portcullis issues: a lower-case UUID v4 followed by
 * `;session`. Anything else is refused without a store lookup.
 *
 * @example
 * ```ts
 * isSessionToken('3b241101-e2bb-4255-8caf-4136c566a962;session'); // true
 * isSessionToken('../../etc;session');                             // false
 * ```
 */
export function isSessionToken(value: unknown): value is string {
  return typeof value === 'string' && value.length === SESSION_TOKEN_LENGTH && SESSION_TOKEN.test(value);
}
