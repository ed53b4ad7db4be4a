/**
 * SHA-256 (FIPS 180-4) for short messages, written for the MAC of UDP datagrams:
 * Int32 arithmetic on preallocated arrays, no allocation per call, and a hash can
 * start from a saved state, so an HMAC key's padded blocks are compressed once.
 * Not exported from the package: {@link UdpMacKey} is its only user.
 */

const ROUND = new Int32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
  0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
  0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
  0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);

/** The initial hash value: the state before any block. */
export const SHA256_INITIAL = new Int32Array([0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19]);

/** Bytes of a block. */
export const SHA256_BLOCK_BYTES = 64;

const schedule = new Int32Array(64);
const tail = new Uint8Array(2 * SHA256_BLOCK_BYTES);

/** Compresses the 64-byte block of `bytes` at `at` into the 8 words of `state` from `stateAt`. */
export function sha256Block(state: Int32Array, stateAt: number, bytes: Uint8Array, at: number): void {
  const w = schedule;
  for (let i = 0; i < 16; i++, at += 4) w[i] = (bytes[at]! << 24) | (bytes[at + 1]! << 16) | (bytes[at + 2]! << 8) | bytes[at + 3]!;
  let a = state[stateAt]!;
  let b = state[stateAt + 1]!;
  let c = state[stateAt + 2]!;
  let d = state[stateAt + 3]!;
  let e = state[stateAt + 4]!;
  let f = state[stateAt + 5]!;
  let g = state[stateAt + 6]!;
  let h = state[stateAt + 7]!;
  for (let i = 0; i < 64; i++) {
    let word: number;
    if (i < 16) {
      word = w[i]!;
    } else {
      const x = w[i - 15]!;
      const y = w[i - 2]!;
      const s0 = ((x >>> 7) | (x << 25)) ^ ((x >>> 18) | (x << 14)) ^ (x >>> 3);
      const s1 = ((y >>> 17) | (y << 15)) ^ ((y >>> 19) | (y << 13)) ^ (y >>> 10);
      word = w[i] = (s0 + s1 + w[i - 7]! + w[i - 16]!) | 0;
    }
    const sum1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
    // Ch(e, f, g) and Maj(a, b, c) in their shorter equivalent forms.
    const t1 = (h + sum1 + (g ^ (e & (f ^ g))) + ROUND[i]! + word) | 0;
    const sum0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
    const t2 = (sum0 + ((a & b) | (c & (a | b)))) | 0;
    h = g;
    g = f;
    f = e;
    e = (d + t1) | 0;
    d = c;
    c = b;
    b = a;
    a = (t1 + t2) | 0;
  }
  state[stateAt] = state[stateAt]! + a;
  state[stateAt + 1] = state[stateAt + 1]! + b;
  state[stateAt + 2] = state[stateAt + 2]! + c;
  state[stateAt + 3] = state[stateAt + 3]! + d;
  state[stateAt + 4] = state[stateAt + 4]! + e;
  state[stateAt + 5] = state[stateAt + 5]! + f;
  state[stateAt + 6] = state[stateAt + 6]! + g;
  state[stateAt + 7] = state[stateAt + 7]! + h;
}

/**
 * Hashes `bytes[0 … length)` into `state` (8 words, already holding the state after
 * `before` bytes, a multiple of 64), padding included: `state` ends as the digest.
 */
export function sha256Finish(state: Int32Array, before: number, bytes: Uint8Array, length: number): void {
  let at = 0;
  for (; at + SHA256_BLOCK_BYTES <= length; at += SHA256_BLOCK_BYTES) sha256Block(state, 0, bytes, at);
  const rest = length - at;
  const blocks = rest < SHA256_BLOCK_BYTES - 8 ? 1 : 2;
  const end = blocks * SHA256_BLOCK_BYTES;
  tail.fill(0);
  for (let i = 0; i < rest; i++) tail[i] = bytes[at + i]!;
  tail[rest] = 0x80;
  const bits = (before + length) * 8;
  const high = Math.floor(bits / 0x1_0000_0000);
  tail[end - 8] = high >>> 24;
  tail[end - 7] = high >>> 16;
  tail[end - 6] = high >>> 8;
  tail[end - 5] = high;
  tail[end - 4] = bits >>> 24;
  tail[end - 3] = bits >>> 16;
  tail[end - 2] = bits >>> 8;
  tail[end - 1] = bits;
  sha256Block(state, 0, tail, 0);
  if (blocks === 2) sha256Block(state, 0, tail, SHA256_BLOCK_BYTES);
}
