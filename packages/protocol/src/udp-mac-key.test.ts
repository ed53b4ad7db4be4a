import { createHmac, randomBytes, randomInt } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { UdpMacKey } from './udp-mac-key.js';

const hmac16 = (key: Uint8Array, message: Uint8Array) => createHmac('sha256', key).update(message).digest().subarray(0, 16);
const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');

/** Every length up to 300 bytes, with the ones around SHA-256's block and padding boundaries among them. */
const LENGTHS = Array.from({ length: 301 }, (_, length) => length);
const BOUNDARIES = [55, 56, 57, 63, 64, 65, 119, 120, 121, 127, 128, 129, 183, 184, 191, 192, 247, 248, 255, 256];

describe('UdpMacKey', () => {
  it('makes the first 16 bytes of HMAC-SHA256 as node:crypto does, for thousands of random keys and every message length 0–300', () => {
    for (let round = 0; round < 12; round++) {
      for (const length of LENGTHS) {
        const key = randomBytes(32);
        const message = randomBytes(length);
        expect(hex(new UdpMacKey(key).mac(message)), `key ${hex(key)}, ${length} bytes`).toBe(hex(hmac16(key, message)));
      }
    }
  });

  it('agrees with node:crypto at the block boundaries, for keys of any length (shorter, 64, longer than a block)', () => {
    for (const keyLength of [0, 1, 16, 31, 32, 33, 63, 64, 65, 100, 200]) {
      for (const length of BOUNDARIES) {
        const key = randomBytes(keyLength);
        const message = randomBytes(length);
        expect(hex(new UdpMacKey(key).mac(message)), `${keyLength}-byte key, ${length} bytes`).toBe(hex(hmac16(key, message)));
      }
    }
  });

  it('keeps one key usable for many messages: state from one MAC does not leak into the next', () => {
    const key = randomBytes(32);
    const macKey = new UdpMacKey(key);
    const other = new UdpMacKey(randomBytes(32));
    for (let i = 0; i < 2_000; i++) {
      const message = randomBytes(randomInt(0, 301));
      if (i % 3 === 0) other.mac(randomBytes(randomInt(0, 301)));
      expect(hex(macKey.mac(message))).toBe(hex(hmac16(key, message)));
    }
  });

  it('signs a datagram in place: the last 16 bytes become the MAC of everything before them', () => {
    for (const length of [16, 41, 56 + 16, 64 + 16, 120 + 16, 300]) {
      const key = randomBytes(32);
      const datagram = randomBytes(length);
      const signed = Buffer.from(datagram.subarray(0, length - 16));
      new UdpMacKey(key).sign(datagram);
      expect(hex(datagram.subarray(0, length - 16))).toBe(hex(signed));
      expect(hex(datagram.subarray(length - 16))).toBe(hex(hmac16(key, signed)));
    }
    expect(() => new UdpMacKey(randomBytes(32)).sign(new Uint8Array(15))).toThrow(RangeError);
    expect(new UdpMacKey(randomBytes(32)).verify(new Uint8Array(15))).toBe(false);
  });

  it('matches (and verifies a datagram) only with the right MAC: any flipped bit, a wrong key or a wrong length is refused', () => {
    const key = randomBytes(32);
    const macKey = new UdpMacKey(key);
    for (const length of [0, 25, 55, 56, 64, 90, 200]) {
      const signed = randomBytes(length);
      const mac = hmac16(key, signed);
      expect(macKey.matches(signed, mac)).toBe(true);
      for (let bit = 0; bit < 128; bit++) {
        const flipped = Buffer.from(mac);
        flipped[bit >> 3]! ^= 1 << (bit & 7);
        expect(macKey.matches(signed, flipped)).toBe(false);
      }
      if (length > 0) {
        const changed = Buffer.from(signed);
        changed[randomInt(0, length)]! ^= 0x01;
        expect(macKey.matches(changed, mac)).toBe(false);
      }
      expect(new UdpMacKey(randomBytes(32)).matches(signed, mac)).toBe(false);
      const datagram = Buffer.concat([signed, mac]);
      expect(macKey.verify(datagram)).toBe(true);
      for (let bit = 0; bit < datagram.length * 8; bit += 7) {
        const flipped = Buffer.from(datagram);
        flipped[bit >> 3]! ^= 1 << (bit & 7);
        expect(macKey.verify(flipped)).toBe(false);
      }
      expect(macKey.matches(signed, mac.subarray(0, 15))).toBe(false);
      expect(macKey.matches(signed, Buffer.concat([mac, Buffer.alloc(1)]))).toBe(false);
    }
  });
});
