import { createCipheriv, createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { openWith, sealUnder } from './token-seal.js';

const token = '0f8fad5b-d9cb-469f-a165-70867728950e;session';

describe('sealUnder / openWith', () => {
  it('gives every seal its own nonce, across many draws of the nonce pool, and each opens under its token only', () => {
    const nonces = new Set<string>();
    for (let i = 0; i < 2_000; i++) {
      const sealed = sealUnder('access successor', token, `next-${i}`);
      nonces.add(Buffer.from(sealed, 'base64url').subarray(0, 12).toString('hex'));
      expect(openWith('access successor', token, sealed)).toBe(`next-${i}`);
      if (i % 500 === 0) {
        expect(openWith('refresh successor', token, sealed)).toBeUndefined();
        expect(openWith('access successor', token.replace('0f8f', '1f8f'), sealed)).toBeUndefined();
      }
    }
    expect(nonces.size).toBe(2_000);
  });

  it('opens a seal made as servers of earlier releases made it: AES-256-GCM under SHA-256("portcullis <purpose>\\0" ‖ token), nonce ‖ tag ‖ body', () => {
    const iv = randomBytes(12);
    const key = createHash('sha256').update('portcullis paired access\0').update(token).digest();
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    const body = Buffer.concat([cipher.update('the access token', 'utf8'), cipher.final()]);
    const sealed = Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
    expect(openWith('paired access', token, sealed)).toBe('the access token');
  });
});
