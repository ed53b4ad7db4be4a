import { describe, expect, it } from 'vitest';
import { encodeFrame, FrameDecoder, FrameTooLargeError } from './frame-codec.js';

const utf8 = new TextDecoder();
const text = (frames: Uint8Array[]) => frames.map((f) => utf8.decode(f));
const concat = (...parts: Uint8Array[]) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  parts.reduce((at, p) => (out.set(p, at), at + p.length), 0);
  return out;
};
const lengthOf = (frame: Uint8Array) => new DataView(frame.buffer, frame.byteOffset).getUint32(0);

describe('encodeFrame', () => {
  it('prefixes the UTF-8 byte length, big-endian', () => {
    const frame = encodeFrame('{"a":"é"}');
    expect(lengthOf(frame)).toBe(new TextEncoder().encode('{"a":"é"}').length);
    expect(utf8.decode(frame.subarray(4))).toBe('{"a":"é"}');
  });

  it('frames bytes as they are', () => {
    expect([...encodeFrame(new Uint8Array([0xff, 0x00, 0x7b]))]).toEqual([0, 0, 0, 3, 0xff, 0x00, 0x7b]);
  });
});

describe('FrameDecoder', () => {
  it('returns a frame that arrives whole', () => {
    expect(text(new FrameDecoder().push(encodeFrame('{"id":1}')))).toEqual(['{"id":1}']);
  });

  it('returns every frame of coalesced chunks, in order', () => {
    const chunk = concat(encodeFrame('one'), encodeFrame(''), encodeFrame('three'));
    expect(text(new FrameDecoder().push(chunk))).toEqual(['one', '', 'three']);
  });

  it('reassembles a frame split byte by byte, including its length prefix', () => {
    const decoder = new FrameDecoder();
    const bytes = concat(encodeFrame('{"x":1}'), encodeFrame('{"y":2}'));
    const out: string[] = [];
    for (const byte of bytes) out.push(...text(decoder.push(new Uint8Array([byte]))));
    expect(out).toEqual(['{"x":1}', '{"y":2}']);
    expect(decoder.bufferedBytes).toBe(0);
  });

  it('handles a chunk that ends one frame and starts the next', () => {
    const decoder = new FrameDecoder();
    const bytes = concat(encodeFrame('first'), encodeFrame('second'));
    expect(text(decoder.push(bytes.subarray(0, 11)))).toEqual(['first']);
    expect(text(decoder.push(bytes.subarray(11)))).toEqual(['second']);
  });

  it('reassembles a 64 KiB frame sent as 65,540 one-byte chunks', () => {
    const decoder = new FrameDecoder({ maxFrameBytes: 64 * 1024 });
    const body = 'x'.repeat(64 * 1024);
    const bytes = encodeFrame(body);
    const out: Uint8Array[] = [];
    for (let i = 0; i < bytes.length; i++) out.push(...decoder.push(bytes.subarray(i, i + 1)));
    expect(out).toHaveLength(1);
    expect(utf8.decode(out[0]!)).toBe(body);
  });

  it('refuses an oversized length as soon as the prefix is read, before the body', () => {
    const decoder = new FrameDecoder({ maxFrameBytes: 1024 });
    const prefix = new Uint8Array(4);
    new DataView(prefix.buffer).setUint32(0, 50 * 1024 * 1024);
    expect(() => decoder.push(prefix)).toThrow(FrameTooLargeError);
  });

  it('accepts a frame of exactly the limit', () => {
    const decoder = new FrameDecoder({ maxFrameBytes: 8 });
    expect(text(decoder.push(encodeFrame('12345678')))).toEqual(['12345678']);
  });
});
