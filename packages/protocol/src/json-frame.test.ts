import { describe, expect, it } from 'vitest';
import { parseJsonFrame } from './json-frame.js';

describe('parseJsonFrame', () => {
  it('reads text and UTF-8 bytes alike', () => {
    const text = '{"id":1,"data":"é€"}';
    expect(parseJsonFrame(text)).toEqual({ id: 1, data: 'é€' });
    expect(parseJsonFrame(new TextEncoder().encode(text))).toEqual({ id: 1, data: 'é€' });
  });

  it('answers undefined for bad JSON and for bytes that are not valid UTF-8', () => {
    for (const bad of ['{"id":', '', new Uint8Array([0x7b, 0x22, 0xff, 0x22, 0x7d]), new Uint8Array([0x22, 0xc3, 0x22])]) {
      expect(parseJsonFrame(bad)).toBeUndefined();
    }
    expect(parseJsonFrame('null')).toBeNull();
  });
});
