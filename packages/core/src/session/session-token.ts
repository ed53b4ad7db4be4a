/**
 * Session tokens made and stored: a new random token, and the store key of one.
 * Their shape (`isSessionToken`) is part of `@portcullis/protocol`.
 */
import { randomUUID } from 'node:crypto';
import { SESSION_TOKEN_SUFFIX } from '@portcullis/protocol';

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
