import { createHash, createHmac, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { udpMac, udpMacMatches, UdpKeyring, udpSessionId, udpSessionIdOfKey } from './udp-keyring.js';

const token = '0f8fad5b-d9cb-469f-a165-70867728950e;session';
const signingKey = Buffer.alloc(32, 7);

describe('UdpKeyring', () => {
  it('derives sid = SHA-256(access token)[0..16] and udpKey = HMAC-SHA256(secret, "udp:" ‖ sid), the secret being HMAC-SHA256(signing key, "portcullis:udp-secret")', () => {
    const sid = createHash('sha256').update(token).digest().subarray(0, 16);
    expect(udpSessionId(token).equals(sid)).toBe(true);
    // The store key of the token (base64url SHA-256) names the same sid.
    expect(udpSessionIdOfKey(createHash('sha256').update(token).digest('base64url')).equals(sid)).toBe(true);
    const secret = createHmac('sha256', signingKey).update('portcullis:udp-secret').digest();
    const udpKey = createHmac('sha256', secret).update(Buffer.concat([Buffer.from('udp:'), sid])).digest();
    expect(new UdpKeyring(signingKey).udpKeyOf(token)).toBe(udpKey.toString('base64url'));
    expect(Buffer.from(new UdpKeyring(signingKey).udpKeyOf(token), 'base64url')).toHaveLength(32);
  });

  it('gives every server with the same signing key the same UDP key, and another key gives another', () => {
    expect(new UdpKeyring(Buffer.from(signingKey)).udpKeyOf(token)).toBe(new UdpKeyring(signingKey).udpKeyOf(token));
    expect(new UdpKeyring(randomBytes(32)).udpKeyOf(token)).not.toBe(new UdpKeyring(signingKey).udpKeyOf(token));
  });

  it('after a rotation makes new keys with the new signing key and still offers the previous key\'s', () => {
    const newKey = randomBytes(32);
    const rotated = new UdpKeyring(newKey, [signingKey]);
    const sid = udpSessionId(token);
    expect(rotated.keyFor(sid).equals(new UdpKeyring(newKey).keyFor(sid))).toBe(true);
    expect(rotated.keysFor(sid).map((k) => k.toString('base64url'))).toEqual([
      new UdpKeyring(newKey).udpKeyOf(token),
      new UdpKeyring(signingKey).udpKeyOf(token),
    ]);
  });

  it('MACs are the first 16 bytes of HMAC-SHA256 and any change to the signed bytes or the key fails the check', () => {
    const key = randomBytes(32);
    const signed = Buffer.from('\x01 sixteen bytes! 8 bytes {"id":1}');
    const mac = udpMac(key, signed);
    expect(mac.equals(createHmac('sha256', key).update(signed).digest().subarray(0, 16))).toBe(true);
    expect(udpMacMatches(key, signed, mac)).toBe(true);
    expect(udpMacMatches(randomBytes(32), signed, mac)).toBe(false);
    expect(udpMacMatches(key, Buffer.concat([signed, Buffer.from(' ')]), mac)).toBe(false);
    expect(udpMacMatches(key, signed, mac.subarray(0, 15))).toBe(false);
  });
});
