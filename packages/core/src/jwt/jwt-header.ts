/**
 * Reads a JWS protected header once, before any signature work (internal). The
 * verdict depends only on the header text, so the validator may cache it.
 */
import type { JwtTokenType } from '../contracts/tokens.js';
import type { TokenFailureReason } from '../errors/error-codes.js';
import { ACCESS_TOKEN_TYP, REFRESH_TOKEN_TYP } from './jwt-signer.js';

/** Header parameters that are refused: critical extensions, embedded or remote keys, compression. */
export const UNSUPPORTED_HEADERS: readonly string[] = Object.freeze(['crit', 'jwk', 'jku', 'x5u', 'x5c', 'zip']);

/** The header's verdict: acceptable (with the token type its `typ` names, if any) or a failure. */
export type HeaderVerdict =
  | { readonly ok: true; readonly type: JwtTokenType | undefined; readonly kid: string | undefined }
  | { readonly ok: false; readonly reason: TokenFailureReason };

const BASE64URL = /^[A-Za-z0-9_-]+$/;
const MALFORMED: HeaderVerdict = Object.freeze({ ok: false, reason: 'malformed' });
const WRONG_ALGORITHM: HeaderVerdict = Object.freeze({ ok: false, reason: 'wrong_algorithm' });
const UNSUPPORTED: HeaderVerdict = Object.freeze({ ok: false, reason: 'unsupported_header' });

/** `typ` is a media type: case-insensitive, and `application/` may be omitted (RFC 7515 §4.1.9). */
function tokenType(typ: unknown): JwtTokenType | undefined {
  if (typeof typ !== 'string') return undefined;
  const media = typ.toLowerCase().replace(/^application\//, '');
  if (media === ACCESS_TOKEN_TYP) return 'access';
  if (media === REFRESH_TOKEN_TYP) return 'refresh';
  return undefined;
}

/**
 * Decodes a base64url header segment and applies the header rules: a JSON object,
 * `alg` exactly `algorithm` (the configured one), none of {@link UNSUPPORTED_HEADERS},
 * `kid` a string when present.
 */
export function readHeader(segment: string, algorithm: 'HS256' | 'EdDSA'): HeaderVerdict {
  if (!BASE64URL.test(segment)) return MALFORMED;
  let header: unknown;
  try {
    header = JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'));
  } catch {
    return MALFORMED;
  }
  if (typeof header !== 'object' || header === null || Array.isArray(header)) return MALFORMED;
  const fields = header as Record<string, unknown>;
  if (fields.alg !== algorithm || !Object.hasOwn(fields, 'alg')) return WRONG_ALGORITHM;
  if (UNSUPPORTED_HEADERS.some((name) => Object.hasOwn(fields, name))) return UNSUPPORTED;
  const kid = Object.hasOwn(fields, 'kid') ? fields.kid : undefined;
  if (kid !== undefined && typeof kid !== 'string') return MALFORMED;
  return Object.freeze({ ok: true, type: tokenType(fields.typ), kid });
}
