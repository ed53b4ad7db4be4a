/**
 * The MAC of authenticated UDP datagrams, HMAC-SHA256 truncated to 16 bytes, with
 * the key's padded blocks compressed once per key: a datagram then costs the
 * compression of its own one or two blocks and one more, and allocates nothing.
 * Plain TypeScript, so the server, the Node client and a browser share it.
 */
import { SHA256_BLOCK_BYTES, SHA256_INITIAL, sha256Block, sha256Finish } from './sha256.js';

const MAC_BYTES = 16;
const DIGEST_BYTES = 32;
const work = new Int32Array(8);
const pad = new Uint8Array(SHA256_BLOCK_BYTES);
const innerDigest = new Uint8Array(DIGEST_BYTES);

/**
 * A UDP key ready to make and check MACs: `HMAC-SHA256(udpKey, signed)`, first 16 bytes.
 * Keep one per session; it holds 64 bytes of state derived from the key (not the key).
 *
 * @example
 * ```ts
 * const macKey = new UdpMacKey(Buffer.from(session.udpKey, 'base64url'));
 * const datagram = layUdpDatagram(sid, seq, body);
 * macKey.sign(datagram); // fills the last 16 bytes
 * macKey.verify(datagram); // true
 * const parts = readUdpDatagram(datagram)!;
 * macKey.matches(parts.signed, parts.mac); // true
 * ```
 */
export class UdpMacKey {
  /** Words 0–7: SHA-256 state after key ⊕ ipad; words 8–15: after key ⊕ opad. */
  readonly #states = new Int32Array(16);

  /** @param key - the HMAC key; a UDP key is 32 bytes, longer keys are hashed first as HMAC prescribes. */
  constructor(key: Uint8Array) {
    let bytes = key;
    if (bytes.length > SHA256_BLOCK_BYTES) {
      work.set(SHA256_INITIAL);
      sha256Finish(work, 0, key, key.length);
      bytes = wordsToBytes(work, new Uint8Array(DIGEST_BYTES), DIGEST_BYTES);
    }
    this.#states.set(SHA256_INITIAL, 0);
    this.#states.set(SHA256_INITIAL, 8);
    for (let i = 0; i < SHA256_BLOCK_BYTES; i++) pad[i] = (bytes[i] ?? 0) ^ 0x36;
    sha256Block(this.#states, 0, pad, 0);
    for (let i = 0; i < SHA256_BLOCK_BYTES; i++) pad[i] = (bytes[i] ?? 0) ^ 0x5c;
    sha256Block(this.#states, 8, pad, 0);
    pad.fill(0);
  }

  /** The 16-byte MAC of `signed`. */
  mac(signed: Uint8Array): Uint8Array {
    this.#hmac(signed, signed.length);
    return wordsToBytes(work, new Uint8Array(MAC_BYTES), MAC_BYTES);
  }

  /**
   * Writes the MAC of a laid-out datagram (see `layUdpDatagram`) over its last 16 bytes.
   *
   * @throws RangeError for fewer than 16 bytes.
   */
  sign(datagram: Uint8Array): void {
    const macAt = datagram.length - MAC_BYTES;
    if (macAt < 0) throw new RangeError(`a datagram ends with a ${MAC_BYTES}-byte MAC, got ${datagram.length} bytes`);
    this.#hmac(datagram, macAt);
    for (let i = 0; i < MAC_BYTES / 4; i++) {
      const word = work[i]!;
      datagram[macAt + 4 * i] = word >>> 24;
      datagram[macAt + 4 * i + 1] = word >>> 16;
      datagram[macAt + 4 * i + 2] = word >>> 8;
      datagram[macAt + 4 * i + 3] = word;
    }
  }

  /** True when `mac` is the MAC of `signed`; every byte is compared, whatever differs (constant time). */
  matches(signed: Uint8Array, mac: Uint8Array): boolean {
    if (mac.length !== MAC_BYTES) return false;
    this.#hmac(signed, signed.length);
    return sameAsWork(mac, 0);
  }

  /** True when a datagram's last 16 bytes are the MAC of the bytes before them (constant time); false for fewer than 16 bytes. */
  verify(datagram: Uint8Array): boolean {
    const macAt = datagram.length - MAC_BYTES;
    if (macAt < 0) return false;
    this.#hmac(datagram, macAt);
    return sameAsWork(datagram, macAt);
  }

  /** HMAC-SHA256 of `bytes[0 … length)` into `work`. */
  #hmac(bytes: Uint8Array, length: number): void {
    const states = this.#states;
    for (let i = 0; i < 8; i++) work[i] = states[i]!;
    sha256Finish(work, SHA256_BLOCK_BYTES, bytes, length);
    wordsToBytes(work, innerDigest, DIGEST_BYTES);
    for (let i = 0; i < 8; i++) work[i] = states[8 + i]!;
    sha256Finish(work, SHA256_BLOCK_BYTES, innerDigest, DIGEST_BYTES);
  }
}

/** Compares `bytes[at … at+16)` with the first 16 bytes of `work`, every byte whatever differs. */
function sameAsWork(bytes: Uint8Array, at: number): boolean {
  let differ = 0;
  for (let i = 0; i < MAC_BYTES / 4; i++) {
    const word = work[i]!;
    const from = at + 4 * i;
    differ |= (bytes[from]! ^ (word >>> 24)) | (bytes[from + 1]! ^ ((word >>> 16) & 0xff)) | (bytes[from + 2]! ^ ((word >>> 8) & 0xff)) | (bytes[from + 3]! ^ (word & 0xff));
  }
  return differ === 0;
}

function wordsToBytes(words: Int32Array, into: Uint8Array, bytes: number): Uint8Array {
  for (let i = 0; i < bytes / 4; i++) {
    const word = words[i]!;
    into[4 * i] = word >>> 24;
    into[4 * i + 1] = word >>> 16;
    into[4 * i + 2] = word >>> 8;
    into[4 * i + 3] = word;
  }
  return into;
}
