/**
 * The UDP keyring built from the configured keys: after an HS256 key rotation a
 * session made under the old key keeps its UDP key (the old key is a previous key),
 * new sessions get keys of the new one; EdDSA derives from the private key; a
 * verify-only server derives nothing.
 */
import 'reflect-metadata';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/load-config.js';
import { resolveSigningKey } from '../src/key/key-guard.js';
import { UdpKeyring, udpSessionId } from '../src/key/udp-keyring.js';
import { silentLoggerFactory } from '../src/logging/logger.js';

const OLD = randomBytes(32).toString('base64');
const NEW = randomBytes(32).toString('base64');
const token = '0f8fad5b-d9cb-469f-a165-70867728950e;session';
const keyringOf = (env: Record<string, string>, tree: Record<string, unknown> = {}) =>
  UdpKeyring.of(resolveSigningKey(loadConfig({ env: { SVC__SECURITY__MODE: 'jwt', ...env }, tree: { svc: { security: tree } } }), silentLoggerFactory.create('test')));

describe('UdpKeyring.of the configured keys', () => {
  it('HS256: after a rotation with the old key in previous-keys, an old session\'s UDP key still verifies and new ones come from the new key', () => {
    const before = keyringOf({ SVC__SECURITY__KEY: OLD });
    const after = keyringOf({ SVC__SECURITY__KEY: NEW }, { 'previous-keys': [OLD] });
    const sid = udpSessionId(token);
    const oldUdpKey = before.udpKeyOf(token);
    expect(after.keysFor(sid).map((k) => k.toString('base64url'))).toContain(oldUdpKey);
    expect(after.udpKeyOf(token)).not.toBe(oldUdpKey);
    expect(after.udpKeyOf(token)).toBe(keyringOf({ SVC__SECURITY__KEY: NEW }).udpKeyOf(token));
    expect(keyringOf({ SVC__SECURITY__KEY: NEW }).keysFor(sid).map((k) => k.toString('base64url'))).not.toContain(oldUdpKey);
  });

  it('EdDSA: UDP keys come from the private key, the same on every server that holds it; a verify-only server derives none', () => {
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    const pem = privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
    const eddsa = { SVC__SECURITY__JWT__ALGORITHM: 'EdDSA', SVC__SECURITY__SIGNING_KEY: pem };
    expect(keyringOf(eddsa).udpKeyOf(token)).toBe(keyringOf(eddsa).udpKeyOf(token));
    expect(Buffer.from(keyringOf(eddsa).udpKeyOf(token), 'base64url')).toHaveLength(32);
    const verifyOnly = keyringOf({
      SVC__SECURITY__JWT__ALGORITHM: 'EdDSA',
      SVC__SECURITY__JWT__VERIFY_ONLY: 'true',
      SVC__SECURITY__PUBLIC_KEY: publicKey.export({ format: 'pem', type: 'spki' }).toString(),
    });
    expect(verifyOnly.canDerive).toBe(false);
    expect(verifyOnly.keysFor(udpSessionId(token))).toEqual([]);
    expect(() => verifyOnly.udpKeyOf(token)).toThrow(/verify-only/);
  });
});
