/**
 * A secret sealed under a token: only a holder of that token can open it. Used wherever a
 * successor credential must travel or rest outside memory (the reuse grace's cache entry, a
 * refresh's revocation event): the store and the channel never carry it readable.
 */
import { createCipheriv, createDecipheriv, hash, randomFillSync } from 'node:crypto';

/** What a sealed value is for: each purpose derives its own key from the token. */
export type SealPurpose = 'refresh successor' | 'access successor' | 'paired access';

const NONCE_BYTES = 12;
/** Nonces drawn from the CSPRNG at once: a draw costs about 5 µs for 12 bytes and for 4 KiB alike. */
const NONCE_POOL_BYTES = NONCE_BYTES * 341;
let noncePool = Buffer.alloc(0);
let nonceOffset = 0;

/**
 * A fresh random nonce. Each byte of a draw is handed out once, and a used-up draw is replaced,
 * never refilled. Nonces travel in the sealed text, so the pool holds nothing secret.
 */
function nonce(): Buffer {
  if (nonceOffset + NONCE_BYTES > noncePool.length) {
    noncePool = randomFillSync(Buffer.allocUnsafeSlow(NONCE_POOL_BYTES));
    nonceOffset = 0;
  }
  const next = Buffer.from(noncePool.subarray(nonceOffset, nonceOffset + NONCE_BYTES));
  nonceOffset += NONCE_BYTES;
  return next;
}

function sealKey(purpose: SealPurpose, token: string): Buffer {
  return hash('sha256', `portcullis ${purpose}\0${token}`, 'buffer');
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
  const iv = nonce();
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
