/**
 * A secret sealed under a token: only a holder of that token can open it. Used wherever a
 * successor credential must travel or rest outside memory (the reuse grace's cache entry, a
 * refresh's revocation event): the store and the channel never carry it readable.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/** What a sealed value is for: each purpose derives its own key from the token. */
export type SealPurpose = 'refresh successor' | 'access successor' | 'paired access';

function sealKey(purpose: SealPurpose, token: string): Buffer {
  return createHash('sha256').update(`portcullis ${purpose}\0`).update(token).digest();
}

/**
 * Encrypts `text` with AES-256-GCM under a key derived from `token`; random 12-byte nonce.
 *
 * @example
 * ```ts
 * const sealed = sealUnder('access successor', oldAccessToken, newAccessToken);
 * ```
 */
export function sealUnder(purpose: SealPurpose, token: string, text: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', sealKey(purpose, token), iv);
  const body = Buffer.concat([cipher.update(text, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
}

/**
 * Opens what {@link sealUnder} sealed; `undefined` for another token, purpose or a tampered seal.
 *
 * @example
 * ```ts
 * const next = openWith('access successor', entry.credential, sealed);
 * ```
 */
export function openWith(purpose: SealPurpose, token: string, sealed: string): string | undefined {
  try {
    const bytes = Buffer.from(sealed, 'base64url');
    if (bytes.length < 28) return undefined;
    const decipher = createDecipheriv('aes-256-gcm', sealKey(purpose, token), bytes.subarray(0, 12));
    decipher.setAuthTag(bytes.subarray(12, 28));
    return Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]).toString('utf8');
  } catch {
    return undefined;
  }
}
