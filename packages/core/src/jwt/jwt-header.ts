/**
 * Reads a JWS protected header once, before any signature work (internal). The
 * verdict depends only on the header text, so the validator may cache it.
 */
import { isUtf8 } from 'node:buffer';
import type { JwtTokenType } from '../contracts/tokens.js';
import type { TokenFailureReason } from '../errors/error-codes.js';
import { ACCESS_TOKEN_TYP, REFRESH_TOKEN_TYP } from './jwt-signer.js';

/** Header parameters that are refused: critical extensions, embedded or remote keys, compression. */
export const UNSUPPORTED_HEADERS: readonly string[] = Object.freeze(['crit', 'jwk', 'jku', 'x5u', 'x5c', 'zip']);

/** The header's verdict: acceptable (with the token type its `typ` names, if any) or a failure. */
export type HeaderVerdict =
  | { readonly ok: true; readonly type: JwtTokenType | undefined; readonly kid: string | undefined }
  | { readonly ok: false; readonly reason: TokenFailureReason };

const MALFORMED: HeaderVerdict = Object.freeze({ ok: false, reason: 'malformed' });
const WRONG_ALGORITHM: HeaderVerdict = Object.freeze({ ok: false, reason: 'wrong_algorithm' });
const UNSUPPORTED: HeaderVerdict = Object.freeze({ ok: false, reason: 'unsupported_header' });

/**
 * The JSON object a header or payload segment encodes, or undefined. Only the canonical
 * spelling is read (Node's base64url decoder skips stray characters, so the segment must
 * re-encode to itself), and only valid UTF-8 (a replaced byte would change the text signed).
 */
export function decodeJsonObject(segment: string): Record<string, unknown> | undefined {
  const bytes = Buffer.from(segment, 'base64url');
  if (bytes.toString('base64url') !== segment) return undefined;
  try {
    // A byte order mark survives toString as U+FEFF, which JSON.parse refuses.
    if (!isUtf8(bytes)) return undefined;
    const value: unknown = JSON.parse(bytes.toString('utf8'));
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** `typ` is a media type: case-insensitive, and `application/` may be omitted (RFC 7515 §4.1.9). */
function tokenType(typ: unknown): JwtTokenType | undefined {
  if (typeof typ !== 'string') return undefined;
  const media = typ.toLowerCase().replace(/^application\//, '');
  if (media === ACCESS_TOKEN_TYP) return 'access';
  if (media === REFRESH_TOKEN_TYP) return 'refresh';
  return undefined;
}

/**
 * Decodes a header segment (only its canonical base64url spelling) and applies the header rules: a JSON object,
 * `alg` exactly `algorithm` (the configured one), none of {@link UNSUPPORTED_HEADERS},
 * `kid` a string when present.
 */
export function readHeader(segment: string, algorithm: 'HS256' | 'EdDSA'): HeaderVerdict {
  const fields = decodeJsonObject(segment);
  if (!fields) return MALFORMED;
  if (fields.alg !== algorithm || !Object.hasOwn(fields, 'alg')) return WRONG_ALGORITHM;
  if (UNSUPPORTED_HEADERS.some((name) => Object.hasOwn(fields, name))) return UNSUPPORTED;
  const kid = Object.hasOwn(fields, 'kid') ? fields.kid : undefined;
  if (kid !== undefined && typeof kid !== 'string') return MALFORMED;
  return Object.freeze({ ok: true, type: tokenType(fields.typ), kid });
}
