import { isSessionToken } from '@portcullis/protocol';
import { MAX_TOKEN_LENGTH } from '../jwt/jwt-token-validator.js';

/**
 * The two credential kinds portcullis issues, told apart by shape alone.
 *
 * @example
 * ```ts
 * const kind: CredentialKind | undefined = credentialKind(frame.token);
 * ```
 */
export type CredentialKind = 'jwt' | 'session';

const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

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
