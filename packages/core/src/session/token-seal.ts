/**
 * A secret sealed under a token: only a holder of that token can open it. Used wherever a
 * successor credential must travel or rest outside memory (the reuse grace's cache entry, a
 * refresh's revocation event, a refresh record's access token): the store and the channel
 * never carry it readable.
 */
import { isSessionToken, SESSION_TOKEN_SUFFIX } from '@portcullis/protocol';
import { createCipheriv, createDecipheriv, hash, randomFillSync, timingSafeEqual } from 'node:crypto';

/** What a sealed value is for: each purpose derives its own key from the token. */
export type SealPurpose = 'refresh successor' | TokenSealPurpose;

/**
 * The purposes that seal one session token under another: a pair's access token under its
 * refresh token, a refreshed pair's new access token under the old one.
 */
export type TokenSealPurpose = 'access successor' | 'paired access';

/** The random bytes of a session token: its UUID's 16 bytes. */
const UUID_BYTES = 16;
/** A token seal: nonce ‖ UUID XOR pad ‖ tag. */
const TOKEN_NONCE_BYTES = 8;
const TAG_BYTES = 8;
const SEALED_TOKEN_BYTES = TOKEN_NONCE_BYTES + UUID_BYTES + TAG_BYTES;

const NONCE_BYTES = 12;
/** Nonces drawn from the CSPRNG at once: a draw costs about 5 µs for 12 bytes and for 4 KiB alike. */
const NONCE_POOL_BYTES = NONCE_BYTES * 341;
let noncePool = Buffer.alloc(0);
let nonceOffset = 0;

/**
 * A fresh random nonce of `bytes` bytes. Each byte of a draw is handed out once, and a used-up
 * draw is replaced, never refilled. Nonces travel in the sealed text, so the pool holds nothing secret.
 */
function nonce(bytes = NONCE_BYTES): Buffer {
  if (nonceOffset + bytes > noncePool.length) {
    noncePool = randomFillSync(Buffer.allocUnsafeSlow(NONCE_POOL_BYTES));
    nonceOffset = 0;
  }
  const next = Buffer.from(noncePool.subarray(nonceOffset, nonceOffset + bytes));
  nonceOffset += bytes;
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
 * const sealed = sealUnder('refresh successor', usedToken, JSON.stringify(successor));
 * ```
 */
export function sealUnder(purpose: SealPurpose, token: string, text: string): string {
  const iv = nonce();
  const cipher = createCipheriv('aes-256-gcm', sealKey(purpose, token), iv);
  const body = Buffer.concat([cipher.update(text, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
}

/**
 * Seals a session token under another token in 43 characters, without a cipher context: an
 * 8-byte random nonce, the 16 bytes of the token's UUID XOR the first 16 bytes of
 * SHA-256("portcullis <purpose> pad\0" ‖ nonce ‖ token), and an 8-byte tag, the first 8 bytes of
 * SHA-256("portcullis <purpose> tag\0" ‖ nonce ‖ token ‖ UUID). The pad is fresh for every seal
 * (the nonce), so two seals under one token say nothing of each other; the tag makes any other
 * sealed text, or one opened under another token, open to nothing. In place on an upgrade an
 * AES-GCM seal cost about 37 µs, as it makes a cipher context per call; this is two one-shot digests.
 *
 * @example
 * ```ts
 * const sealedAccess = sealTokenUnder('paired access', refreshToken, accessToken);
 * openTokenWith('paired access', refreshToken, sealedAccess) === accessToken; // true
 * ```
 * @throws TypeError when `sessionToken` is not a session token.
 */
export function sealTokenUnder(purpose: TokenSealPurpose, token: string, sessionToken: string): string {
  if (!isSessionToken(sessionToken)) throw new TypeError('only a session token is sealed this way');
  const uuid = Buffer.from(sessionToken.slice(0, 36).replaceAll('-', ''), 'hex');
  const salt = nonce(TOKEN_NONCE_BYTES);
  const sealed = Buffer.concat([salt, uuid, tagOf(purpose, token, salt, uuid)]);
  xorPad(sealed, purpose, token, salt);
  return sealed.toString('base64url');
}

/**
 * Opens a session token sealed under `token`: one {@link sealTokenUnder} sealed, or one an
 * earlier release sealed with {@link sealUnder} (told apart by length). `undefined` for another
 * token or purpose, and for a changed sealed text.
 *
 * @example
 * ```ts
 * const successor = openTokenWith('access successor', connection.credential, event.sealed);
 * ```
 */
export function openTokenWith(purpose: TokenSealPurpose, token: string, sealed: string): string | undefined {
  // A stored record or an event of another shape may hold anything here.
  if (typeof sealed !== 'string') return undefined;
  const bytes = Buffer.from(sealed, 'base64url');
  if (bytes.length !== SEALED_TOKEN_BYTES) {
    const opened = openWith(purpose, token, sealed);
    return isSessionToken(opened) ? opened : undefined;
  }
  const salt = bytes.subarray(0, TOKEN_NONCE_BYTES);
  xorPad(bytes, purpose, token, salt);
  const uuid = bytes.subarray(TOKEN_NONCE_BYTES, TOKEN_NONCE_BYTES + UUID_BYTES);
  if (!timingSafeEqual(tagOf(purpose, token, salt, uuid), bytes.subarray(TOKEN_NONCE_BYTES + UUID_BYTES))) return undefined;
  const hex = uuid.toString('hex');
  const opened = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}${SESSION_TOKEN_SUFFIX}`;
  return isSessionToken(opened) ? opened : undefined;
}

/** XORs the pad of `purpose` under `token` and `salt` into the UUID bytes of a token seal. */
function xorPad(sealed: Buffer, purpose: TokenSealPurpose, token: string, salt: Buffer): void {
  const pad = hash('sha256', `portcullis ${purpose} pad\0${salt.toString('hex')}\0${token}`, 'buffer');
  for (let i = 0; i < UUID_BYTES; i++) sealed[TOKEN_NONCE_BYTES + i]! ^= pad[i]!;
}

/** The tag of a token seal: it binds the UUID to the purpose, the token and the nonce. */
function tagOf(purpose: TokenSealPurpose, token: string, salt: Buffer, uuid: Buffer): Buffer {
  return hash('sha256', `portcullis ${purpose} tag\0${salt.toString('hex')}\0${token}\0${uuid.toString('hex')}`, 'buffer').subarray(0, TAG_BYTES);
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
