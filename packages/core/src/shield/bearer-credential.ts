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

/** What {@link bearerCredentialOf} reads of a request: node's parsed and raw headers. */
interface HeadersOf {
  readonly headers: { readonly authorization?: string | undefined };
  readonly rawHeaders: readonly string[];
}

/**
 * The bearer credential of a request (`IncomingMessage`, express's `Request`), as
 * {@link bearerCredential} reads it, with one more refusal: node keeps only the first
 * of several `Authorization` headers, so they are counted in the raw headers, and a
 * request with more than one has no usable credential (`null`).
 *
 * @example
 * ```ts
 * const token = bearerCredentialOf(request); // null for `Authorization` sent twice
 * if (token === null) return refuseUpgrade(socket, 401);
 * ```
 */
export function bearerCredentialOf(request: HeadersOf): string | null | undefined {
  const header = request.headers.authorization;
  if (header === undefined) return undefined;
  return hasRepeatedAuthorization(request.rawHeaders) ? null : bearerCredential(header);
}

/**
 * True when a request carries more than one `Authorization` header.
 *
 * @example
 * ```ts
 * if (severalAuthorizations(req)) return refuse(401);
 * ```
 */
export function severalAuthorizations(request: HeadersOf): boolean {
  return request.headers.authorization !== undefined && hasRepeatedAuthorization(request.rawHeaders);
}

function hasRepeatedAuthorization(raw: readonly string[]): boolean {
  let seen = 0;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    if (name.length === 13 && name.toLowerCase() === 'authorization' && ++seen > 1) return true;
  }
  return false;
}
