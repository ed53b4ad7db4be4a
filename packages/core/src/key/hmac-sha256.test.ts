import { createHmac, createSecretKey, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { HmacSha256 } from './hmac-sha256.js';

describe('HmacSha256', () => {
  it('answers the bytes createHmac answers, for keys shorter than, as long as and longer than the block, and strings read as UTF-8', () => {
    for (const keyLength of [1, 32, 64, 65, 200]) {
      const key = randomBytes(keyLength);
      const hmac = new HmacSha256(key);
      for (const message of ['', 'header.payload', 'é✓ 𝄞 multi-byte', 'x'.repeat(5_000), randomBytes(300)]) {
        expect(hmac.digest(message).equals(createHmac('sha256', key).update(message).digest())).toBe(true);
      }
    }
  });

  it('takes a secret KeyObject as it takes its bytes, and a message after a longer one is not mixed with it', () => {
    const key = randomBytes(32);
    const hmac = new HmacSha256(createSecretKey(key));
    hmac.digest('a much longer message than the next one');
    expect(hmac.digest('short').equals(createHmac('sha256', key).update('short').digest())).toBe(true);
  });
});
