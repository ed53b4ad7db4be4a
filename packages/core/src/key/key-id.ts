/**
 * The `kid` of a key, derived in one place for signing, validation and the JWK Set.
 */
import { createHash, createPublicKey, type KeyObject } from 'node:crypto';

/**
 * The key id portcullis writes in every token's `kid` header: the first 16 characters of
 * base64url(SHA-256(bytes)). `bytes` are the HMAC key's bytes for HS256 and the public key's
 * SPKI DER for EdDSA ({@link keyIdOf} chooses). The id names a key without revealing it.
 *
 * @example
 * ```ts
 * keyId(Buffer.from(process.env.SVC__SECURITY__KEY!, 'base64')); // e.g. 'q3fXK0b8ZtM1v9cA'
 * ```
 */
export function keyId(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('base64url').slice(0, 16);
}

/**
 * The key id of a `KeyObject`: of a secret key's bytes, or of the SPKI DER of a public key
 * (or of a private key's public half).
 *
 * @example
 * ```ts
 * keyIdOf(createPublicKey(pem)) === jwks.keys[0].kid;
 * ```
 */
export function keyIdOf(key: KeyObject): string {
  if (key.type === 'secret') return keyId(key.export());
  const publicKey = key.type === 'private' ? createPublicKey(key) : key;
  return keyId(publicKey.export({ type: 'spki', format: 'der' }));
}
