import { createCipheriv, createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
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
  it('seals a session token in 43 characters that hold none of its text, and opens it under that token and purpose only', () => {
    const sealed = sealTokenUnder('paired access', token, other);
    expect(sealed).toMatch(/^[\w-]{43}$/);
    const uuidBytes = Buffer.from(other.slice(0, 36).replaceAll('-', ''), 'hex');
    expect(Buffer.from(sealed, 'base64url').includes(uuidBytes.subarray(0, 6))).toBe(false);
    expect(openTokenWith('paired access', token, sealed)).toBe(other);
    expect(openTokenWith('access successor', token, sealed)).toBeUndefined();
    expect(openTokenWith('paired access', other, sealed)).toBeUndefined();
  });

  it('is nonce ‖ UUID XOR SHA-256("portcullis <purpose> pad\\0" ‖ nonce ‖ token) ‖ tag, with a fresh nonce, so two seals of one token under one token differ', () => {
    const sealed = Buffer.from(sealTokenUnder('access successor', token, other), 'base64url');
    const nonce = sealed.subarray(0, 8);
    const pad = createHash('sha256').update(`portcullis access successor pad\0${nonce.toString('hex')}\0${token}`).digest();
    const uuid = sealed.subarray(8, 24).map((byte, i) => byte ^ pad[i]!);
    expect(Buffer.from(uuid).toString('hex')).toBe(other.slice(0, 36).replaceAll('-', ''));
    const seals = new Set(Array.from({ length: 1_000 }, () => sealTokenUnder('access successor', token, other)));
    expect(seals.size).toBe(1_000);
  });

  it('opens nothing from a changed seal: every flipped bit, a random text of the right length, or a text that is not base64url', () => {
    const sealed = Buffer.from(sealTokenUnder('access successor', token, other), 'base64url');
    for (let bit = 0; bit < sealed.length * 8; bit++) {
      const changed = Buffer.from(sealed);
      changed[bit >> 3]! ^= 1 << (bit & 7);
      expect(openTokenWith('access successor', token, changed.toString('base64url'))).toBeUndefined();
    }
    for (let i = 0; i < 200; i++) expect(openTokenWith('access successor', token, randomBytes(32).toString('base64url'))).toBeUndefined();
    expect(openTokenWith('access successor', token, 'not base64url at all, but 43 chars long!!!!')).toBeUndefined();
    expect(openTokenWith('access successor', token, 42 as unknown as string)).toBeUndefined();
  });

  it('opens a token an earlier release sealed with AES-256-GCM, and nothing that is not a session token', () => {
    expect(openTokenWith('paired access', token, sealUnder('paired access', token, other))).toBe(other);
    expect(openTokenWith('paired access', token, sealUnder('paired access', token, 'not a token'))).toBeUndefined();
  });

  it('refuses to seal anything but a session token', () => {
    expect(() => sealTokenUnder('paired access', token, 'player-42')).toThrow(TypeError);
  });
});
