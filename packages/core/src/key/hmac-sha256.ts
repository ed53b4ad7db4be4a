/**
 * HMAC-SHA256 with the key's padded blocks laid out once, as RFC 2104 defines it:
 * SHA-256((K ⊕ opad) ‖ SHA-256((K ⊕ ipad) ‖ message)), a key longer than the 64-byte block
 * hashed first. Two one-shot digests (`crypto.hash`) per message cost less than an HMAC
 * context (`createHmac`) made per message, which a JWT's signature check, a JWT's signing
 * and each UDP key would otherwise make; the answer is the same bytes.
 */
import { hash, KeyObject } from 'node:crypto';

const BLOCK_BYTES = 64;
const DIGEST_BYTES = 32;

/**
 * One key, ready to authenticate many messages.
 *
 * @example
 * ```ts
 * const hmac = new HmacSha256(secret);
 * hmac.digest('header.payload').equals(createHmac('sha256', secret).update('header.payload').digest()); // true
 * ```
 */
export class HmacSha256 {
  /** K ⊕ ipad. */
  readonly #inner = Buffer.alloc(BLOCK_BYTES);
  /** (K ⊕ opad) ‖ room for the inner digest. */
  readonly #outer = Buffer.alloc(BLOCK_BYTES + DIGEST_BYTES);

  constructor(key: KeyObject | Uint8Array) {
    let bytes: Uint8Array = key instanceof KeyObject ? key.export() : key;
    if (bytes.length > BLOCK_BYTES) bytes = hash('sha256', bytes, 'buffer');
    for (let i = 0; i < BLOCK_BYTES; i++) {
      this.#inner[i] = (bytes[i] ?? 0) ^ 0x36;
      this.#outer[i] = (bytes[i] ?? 0) ^ 0x5c;
    }
  }

  /** The 32-byte HMAC of `message` (a string is read as UTF-8). */
  digest(message: string | Uint8Array): Buffer {
    const length = typeof message === 'string' ? Buffer.byteLength(message) : message.length;
    const inner = Buffer.allocUnsafe(BLOCK_BYTES + length);
    this.#inner.copy(inner);
    if (typeof message === 'string') inner.write(message, BLOCK_BYTES, 'utf8');
    else inner.set(message, BLOCK_BYTES);
    this.#outer.set(hash('sha256', inner, 'buffer'), BLOCK_BYTES);
    // The buffer may be a slice of node's shared pool: the padded key must not stay behind in it.
    inner.fill(0, 0, BLOCK_BYTES);
    return hash('sha256', this.#outer, 'buffer');
  }
}
