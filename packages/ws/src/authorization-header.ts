/**
 * Reads the credential of an `Authorization: Bearer <token>` upgrade header. Only
 * the HTTP scheme is looked at; the token itself goes to core unparsed.
 */

const BEARER = /^bearer +(\S+) *$/i;

/**
 * The bearer credential of an `Authorization` header: `undefined` when there is
 * no header, `null` when there is one that is not a usable Bearer credential.
 *
 * @example
 * ```ts
 * bearerFromHeader('Bearer 0b7c…;session'); // '0b7c…;session'
 * bearerFromHeader('Basic dXNlcg==');       // null
 * bearerFromHeader(undefined);              // undefined
 * ```
 */
export function bearerFromHeader(header: string | string[] | undefined): string | null | undefined {
  if (header === undefined) return undefined;
  if (typeof header !== 'string') return null;
  return BEARER.exec(header)?.[1] ?? null;
}
