/**
 * The credentials a connection or a request may present, told apart by shape
 * alone: a session token or a signed compact JWT, at most `MAX_TOKEN_LENGTH`
 * characters.
 */
import { isSessionToken } from './session-token.js';

/**
 * The longest credential accepted anywhere (8,192 characters); a longer one is
 * refused before it is parsed.
 *
 * @example
 * ```ts
 * if (bearer.length > MAX_TOKEN_LENGTH) return refuse();
 * ```
 */
export const MAX_TOKEN_LENGTH = 8192;

/**
 * The two credential kinds portcullis issues.
 *
 * @example
 * ```ts
 * const kind: CredentialKind | undefined = credentialKind(frame.token);
 * ```
 */
export type CredentialKind = 'jwt' | 'session';

const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

/**
 * True when the text is shaped like a signed compact JWT (not that it verifies).
 *
 * @example
 * ```ts
 * isJwtShape('eyJ….eyJ….sig'); // true
 * isJwtShape('eyJ….eyJ….');    // false: unsigned
 * ```
 */
export function isJwtShape(credential: string): boolean {
  return credential.length <= MAX_TOKEN_LENGTH && JWT_SHAPE.test(credential);
}

/**
 * Says which kind of credential a bearer string looks like, without verifying it:
 * `jwt` for three base64url segments, `session` for `<uuid v4>;session`, undefined
 * for anything else (including unsigned JWTs, whose signature segment is empty).
 *
 * @example
 * ```ts
 * credentialKind('0b7c…;session'); // 'session'
 * credentialKind('Bearer abc');    // undefined
 * ```
 */
export function credentialKind(credential: unknown): CredentialKind | undefined {
  if (typeof credential !== 'string' || credential.length > MAX_TOKEN_LENGTH) return undefined;
  if (isSessionToken(credential)) return 'session';
  return JWT_SHAPE.test(credential) ? 'jwt' : undefined;
}
