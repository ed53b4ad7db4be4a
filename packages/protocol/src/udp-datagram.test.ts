import { describe, expect, it } from 'vitest';
import {
  isUdpDatagram, layUdpDatagram, readUdpDatagram, UDP_DATAGRAM_VERSION, UDP_HEADER_BYTES, UDP_MAC_BYTES, UDP_MIN_DATAGRAM_BYTES,
} from './udp-datagram.js';

const sid = Uint8Array.from({ length: 16 }, (_, i) => i + 1);
const body = new TextEncoder().encode('{"id":7,"portal":"/game","gate":"ping"}');

describe('authenticated UDP datagram layout', () => {
  it('lays out version, sid, big-endian sequence number, body and room for the MAC, and reads them back', () => {
    const datagram = layUdpDatagram(sid, 0x0102030405060708n, body);
    expect(datagram.length).toBe(UDP_HEADER_BYTES + body.length + UDP_MAC_BYTES);
    expect(datagram[0]).toBe(UDP_DATAGRAM_VERSION);
    expect([...datagram.subarray(1, 17)]).toEqual([...sid]);
    expect([...datagram.subarray(17, 25)]).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(new TextDecoder().decode(datagram.subarray(25, datagram.length - 16))).toBe('{"id":7,"portal":"/game","gate":"ping"}');
    datagram.fill(0xee, datagram.length - 16);
    const parts = readUdpDatagram(datagram)!;
    expect(parts.seq).toBe(0x0102030405060708n);
    expect([parts.seqHigh, parts.seqLow]).toEqual([0x01020304, 0x05060708]);
    expect([...parts.sid]).toEqual([...sid]);
    expect([...parts.body]).toEqual([...body]);
    expect(parts.signed.length).toBe(datagram.length - 16);
    expect([...parts.mac]).toEqual(new Array(16).fill(0xee));
  });

  it('tells the two forms apart by the first byte: JSON starts with {', () => {
    expect(isUdpDatagram(layUdpDatagram(sid, 1n, body))).toBe(true);
    expect(isUdpDatagram(new TextEncoder().encode('{"id":1}'))).toBe(false);
    expect(isUdpDatagram(new Uint8Array())).toBe(false);
  });

  it('refuses what cannot hold a header and a MAC, or another version', () => {
    expect(readUdpDatagram(new Uint8Array(UDP_MIN_DATAGRAM_BYTES - 1).fill(1))).toBeUndefined();
    expect(readUdpDatagram(new Uint8Array(UDP_MIN_DATAGRAM_BYTES).fill(1))?.body.length).toBe(0);
    const other = layUdpDatagram(sid, 1n, body);
    other[0] = 2;
    expect(readUdpDatagram(other)).toBeUndefined();
  });

  it('refuses a sid of another length and a sequence number outside 64 bits', () => {
    expect(() => layUdpDatagram(sid.subarray(1), 1n, body)).toThrow(RangeError);
    expect(() => layUdpDatagram(sid, -1n, body)).toThrow(RangeError);
    expect(() => layUdpDatagram(sid, 1n << 64n, body)).toThrow(RangeError);
    expect(() => layUdpDatagram(sid, -1, body)).toThrow(RangeError);
    expect(() => layUdpDatagram(sid, 2 ** 53, body)).toThrow(RangeError);
    expect(() => layUdpDatagram(sid, 1.5, body)).toThrow(RangeError);
  });

  it('lays into a given array of the exact length, zeroing where the MAC goes, and refuses another length', () => {
    const into = new Uint8Array(UDP_HEADER_BYTES + body.length + UDP_MAC_BYTES).fill(0xaa);
    expect(layUdpDatagram(sid, 9n, body, into)).toBe(into);
    expect([...into]).toEqual([...layUdpDatagram(sid, 9n, body)]);
    expect(() => layUdpDatagram(sid, 9n, body, new Uint8Array(into.length + 1))).toThrow(RangeError);
  });

  it('lays a sequence number given as a safe integer exactly as the same bigint', () => {
    for (const seq of [0, 1, 0xffff_ffff, 0x1_0000_0000, Date.now() * 1000, Number.MAX_SAFE_INTEGER]) {
      expect([...layUdpDatagram(sid, seq, body)]).toEqual([...layUdpDatagram(sid, BigInt(seq), body)]);
      expect(readUdpDatagram(layUdpDatagram(sid, seq, body))!.seq).toBe(BigInt(seq));
    }
  });
});
