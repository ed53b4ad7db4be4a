/**
 * The one accepted spelling of a JWS signature (internal): unpadded base64url with no
 * spare bits set, so each signature has exactly one text and a changed character is a
 * changed signature.
 */

/** 32 bytes: 42 characters of 6 bits and a last one with 4 data bits (its 2 low bits zero). */
const HS256_SIGNATURE = /^[A-Za-z0-9_-]{42}[AEIMQUYcgkosw048]$/;
/** 64 bytes: 85 characters of 6 bits and a last one with 2 data bits (its 4 low bits zero). */
const ED25519_SIGNATURE = /^[A-Za-z0-9_-]{85}[AQgw]$/;

/** The signature pattern of each algorithm. */
export const SIGNATURE_PATTERNS = Object.freeze({ HS256: HS256_SIGNATURE, EdDSA: ED25519_SIGNATURE });

/**
 * The bytes of a signature segment, or undefined unless it is exactly the canonical
 * base64url encoding of a signature of `algorithm` (43 characters for HS256, 86 for EdDSA).
 */
export function decodeSignature(segment: string, algorithm: keyof typeof SIGNATURE_PATTERNS): Buffer | undefined {
  return SIGNATURE_PATTERNS[algorithm].test(segment) ? Buffer.from(segment, 'base64url') : undefined;
}
