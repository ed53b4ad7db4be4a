import { describe, expect, it } from 'vitest';
import { bearerCredential } from './bearer-credential.js';

describe('bearerCredential', () => {
  it('reads the token of a Bearer header, whatever the case of the scheme and the spaces around the token', () => {
    for (const header of ['Bearer abc.def.ghi', 'bearer abc.def.ghi', 'BEARER   abc.def.ghi', 'Bearer abc.def.ghi  ']) {
      expect(bearerCredential(header)).toBe('abc.def.ghi');
    }
  });

  it('tells no header (undefined) from a header that is not a usable Bearer credential (null)', () => {
    expect(bearerCredential(undefined)).toBeUndefined();
    for (const header of ['Basic dXNlcg==', 'Bearer', 'Bearer a b', 'abc.def.ghi', `Bearer ${'a'.repeat(9000)}`, ['Bearer a', 'Bearer b']]) {
      expect(bearerCredential(header)).toBeNull();
    }
  });
});
