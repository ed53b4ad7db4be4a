import { describe, expect, it } from 'vitest';
import { encodeFrame, FrameDecoder, FrameTooLargeError } from './frame-codec.js';

const text = (frames: Buffer[]) => frames.map((f) => f.toString('utf8'));

describe('encodeFrame', () => {
  it('prefixes the UTF-8 byte length, big-endian', () => {
    const frame = encodeFrame('{"a":"é"}');
    expect(frame.readUInt32BE(0)).toBe(Buffer.byteLength('{"a":"é"}'));
    expect(frame.subarray(4).toString('utf8')).toBe('{"a":"é"}');
  });
});

describe('FrameDecoder', () => {
  it('returns a frame that arrives whole', () => {
    expect(text(new FrameDecoder().push(encodeFrame('{"id":1}')))).toEqual(['{"id":1}']);
  });

  it('returns every frame of coalesced chunks, in order', () => {
    const chunk = Buffer.concat([encodeFrame('one'), encodeFrame(''), encodeFrame('three')]);
    expect(text(new FrameDecoder().push(chunk))).toEqual(['one', '', 'three']);
  });

  it('reassembles a frame split byte by byte, including its length prefix', () => {
    const decoder = new FrameDecoder();
    const bytes = Buffer.concat([encodeFrame('{"x":1}'), encodeFrame('{"y":2}')]);
    const out: string[] = [];
    for (const byte of bytes) out.push(...text(decoder.push(Buffer.from([byte]))));
    expect(out).toEqual(['{"x":1}', '{"y":2}']);
    expect(decoder.bufferedBytes).toBe(0);
  });

  it('handles a chunk that ends one frame and starts the next', () => {
    const decoder = new FrameDecoder();
    const bytes = Buffer.concat([encodeFrame('first'), encodeFrame('second')]);
    expect(text(decoder.push(bytes.subarray(0, 11)))).toEqual(['first']);
    expect(text(decoder.push(bytes.subarray(11)))).toEqual(['second']);
  });

  it('reassembles a 64 KiB frame sent as 65,540 one-byte chunks', () => {
    const decoder = new FrameDecoder({ maxFrameBytes: 64 * 1024 });
    const body = 'x'.repeat(64 * 1024);
    const bytes = encodeFrame(body);
    const out: Buffer[] = [];
    for (let i = 0; i < bytes.length; i++) out.push(...decoder.push(bytes.subarray(i, i + 1)));
    expect(out).toHaveLength(1);
    expect(out[0]!.toString('utf8')).toBe(body);
  });

  it('refuses an oversized length as soon as the prefix is read, before the body', () => {
    const decoder = new FrameDecoder({ maxFrameBytes: 1024 });
    const prefix = Buffer.alloc(4);
    prefix.writeUInt32BE(50 * 1024 * 1024, 0);
    expect(() => decoder.push(prefix)).toThrow(FrameTooLargeError);
  });

  it('accepts a frame of exactly the limit', () => {
    const decoder = new FrameDecoder({ maxFrameBytes: 8 });
    expect(text(decoder.push(encodeFrame('12345678')))).toEqual(['12345678']);
  });
});
