/**
 * The session token format, `<uuid v4>;session`, checked strictly before any lookup so an
 * attacker-chosen string never reaches the store.
 */
import { randomUUID } from 'node:crypto';
import { SESSION_TOKEN_SUFFIX } from '../contracts/sessions.js';

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

/**
 * A new random session token (122 random bits from the CSPRNG).
 *
 * @example
 * ```ts
 * const accessToken = newSessionToken(); // '…;session'
 * ```
 */
export function newSessionToken(): string {
  return `${randomUUID()}${SESSION_TOKEN_SUFFIX}`;
}

/** The store key of a well-formed session token: its UUID. */
export function sessionKey(token: string): string {
  return token.slice(0, 36);
}

/** The session token of a store key. */
export function sessionTokenOf(key: string): string {
  return `${key}${SESSION_TOKEN_SUFFIX}`;
}
