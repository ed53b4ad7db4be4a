/**
 * Reads the credential of an `Authorization: Bearer <token>` header, for every
 * adapter that receives one (HTTP routes, the WebSocket upgrade). Only the scheme
 * is looked at; the token goes to the shields as it came.
 */

/** Longest `Authorization` value looked at; a longer one is not a usable credential. */
const MAX_AUTHORIZATION_LENGTH = 8192;
const BEARER = /^bearer +(\S+) *$/i;

/**
 * The bearer credential of an `Authorization` header, scheme case-insensitive
 * (RFC 7235 §2.1). `undefined` when there is no header; `null` when there is one
 * but it is not a usable Bearer credential (another scheme, no token, a repeated
 * header, over 8 KiB). HTTP treats `null` like no credential; the WebSocket upgrade
 * refuses it with 401.
 *
 * @example
 * ```ts
 * bearerCredential('bEaReR 0b7c…;session'); // '0b7c…;session'
 * bearerCredential('Basic dXNlcg==');       // null
 * bearerCredential(undefined);              // undefined
 * ```
 */
export function bearerCredential(header: string | readonly string[] | undefined): string | null | undefined {
  if (header === undefined) return undefined;
  if (typeof header !== 'string' || header.length > MAX_AUTHORIZATION_LENGTH) return null;
  return BEARER.exec(header)?.[1] ?? null;
}
