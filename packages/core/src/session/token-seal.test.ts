import { createCipheriv, createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { isSessionToken } from '@portcullis/protocol';
import { openTokenWith, openWith, sealTokenUnder, sealUnder } from './token-seal.js';

const token = '0f8fad5b-d9cb-469f-a165-70867728950e;session';
const other = '7c9e6679-7425-40de-944b-e07fc1f90ae7;session';

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

describe('sealTokenUnder / openTokenWith', () => {
  it('seals a session token in 22 characters that hold none of its text, and opens it under that token and purpose only', () => {
    const sealed = sealTokenUnder('paired access', token, other);
    expect(sealed).toMatch(/^[\w-]{22}$/);
    expect(sealed).not.toContain(Buffer.from(other.slice(0, 36).replaceAll('-', ''), 'hex').toString('base64url').slice(0, 8));
    expect(openTokenWith('paired access', token, sealed)).toBe(other);
    expect(openTokenWith('access successor', token, sealed)).not.toBe(other);
    expect(openTokenWith('paired access', other, sealed)).not.toBe(other);
  });

  it('is the token XOR SHA-256("portcullis <purpose> pad\\0" ‖ token), a pad no AES-GCM seal uses as its key: every sealed text opens to a session token or to nothing', () => {
    const key = createHash('sha256').update('portcullis access successor pad\0').update(token).digest();
    const bytes = Buffer.from(other.slice(0, 36).replaceAll('-', ''), 'hex').map((byte, i) => byte ^ key[i]!);
    expect(sealTokenUnder('access successor', token, other)).toBe(Buffer.from(bytes).toString('base64url'));
    for (let i = 0; i < 200; i++) {
      const opened = openTokenWith('access successor', token, randomBytes(16).toString('base64url'));
      if (opened !== undefined) expect(isSessionToken(opened)).toBe(true);
    }
    expect(openTokenWith('access successor', token, 'not base64url at all!!')).toBeUndefined();
  });

  it('opens a token an earlier release sealed with AES-256-GCM, and nothing that is not a session token', () => {
    expect(openTokenWith('paired access', token, sealUnder('paired access', token, other))).toBe(other);
    expect(openTokenWith('paired access', token, sealUnder('paired access', token, 'not a token'))).toBeUndefined();
  });

  it('refuses to seal anything but a session token', () => {
    expect(() => sealTokenUnder('paired access', token, 'player-42')).toThrow(TypeError);
  });
});
