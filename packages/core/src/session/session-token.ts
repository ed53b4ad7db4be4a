/**
 * Session tokens made and stored: a new random token, and the store key of one
 * (its SHA-256 digest, so the store never holds a token). Their shape
 * (`isSessionToken`) is part of `@portcullis/protocol`.
 */
import { hash, randomUUID } from 'node:crypto';
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

/**
 * The key a session token is stored and revoked under: base64url(SHA-256(token, UTF-8)),
 * 43 characters. The cache, the revocation events and the connection index hold only
 * this; a key cannot be turned back into its token, so a copy of the cache or of the
 * revocation channel opens no session.
 *
 * @example
 * ```ts
 * sessions.onRevocation((event) => {
 *   if (event.kind === 'revoked' && event.sessionKeys.includes(sessionKey(myToken))) reconnect();
 * });
 * ```
 */
export function sessionKey(token: string): string {
  // The one-shot hash: a third of createHash's cost, on a path every store read takes.
  return hash('sha256', token, 'base64url');
}
