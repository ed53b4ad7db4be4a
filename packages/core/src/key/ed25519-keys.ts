/**
 * The key guard of EdDSA mode (internal to the key guard): reads the PKCS#8 PEM signing key,
 * the SPKI PEM public keys, and the public development key used outside production.
 */
import { createHash, createPrivateKey, createPublicKey, timingSafeEqual, type KeyObject } from 'node:crypto';
import type { Logger } from '../contracts/logger.js';
import type { PortcullisConfig } from '../contracts/portcullis-config.js';
import type { SigningKey } from '../contracts/signing-key.js';
import { keyRing, refuse } from './key-ring.js';

/** PKCS#8 DER of an Ed25519 private key, before its 32-byte seed (RFC 8410). */
const PKCS8_ED25519_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

/**
 * The public Ed25519 development key: its seed is SHA-256 of a published text, so anyone can
 * sign with it, exactly like the HS256 development key. Production refuses it.
 */
const DEVELOPMENT_ED25519_KEY = createPrivateKey({
  key: Buffer.concat([PKCS8_ED25519_PREFIX, createHash('sha256').update('portcullis-public-development-key-never-use-in-production').digest()]),
  format: 'der',
  type: 'pkcs8',
});

function readPrivateKey(pem: string, setting: string): KeyObject {
  if (!/^-----BEGIN PRIVATE KEY-----\r?\n/.test(pem)) refuse(setting, 'is not a PKCS#8 PEM private key (-----BEGIN PRIVATE KEY-----)');
  let key: KeyObject;
  try {
    key = createPrivateKey({ key: pem, format: 'pem' });
  } catch {
    refuse(setting, 'cannot be read as a PKCS#8 PEM private key');
  }
  if (key.asymmetricKeyType !== 'ed25519') refuse(setting, `is a ${key.asymmetricKeyType ?? 'non-asymmetric'} key; EdDSA needs an Ed25519 key`);
  return key;
}

function readPublicKey(pem: string, setting: string): KeyObject {
  if (!/^-----BEGIN PUBLIC KEY-----\r?\n/.test(pem)) refuse(setting, 'is not an SPKI PEM public key (-----BEGIN PUBLIC KEY-----)');
  let key: KeyObject;
  try {
    key = createPublicKey({ key: pem, format: 'pem' });
  } catch {
    refuse(setting, 'cannot be read as an SPKI PEM public key');
  }
  if (key.asymmetricKeyType !== 'ed25519') refuse(setting, `is a ${key.asymmetricKeyType ?? 'non-asymmetric'} key; EdDSA needs an Ed25519 key`);
  return key;
}

function isDevelopmentKey(publicKey: KeyObject): boolean {
  const der = (key: KeyObject) => key.export({ type: 'spki', format: 'der' });
  return timingSafeEqual(der(publicKey), der(createPublicKey(DEVELOPMENT_ED25519_KEY)));
}

/**
 * Reads the EdDSA keys. `signing-key` (PKCS#8 PEM, Ed25519) signs; its public half and each
 * of `previous-public-keys` (SPKI PEM) verify. Production refuses to start without a signing
 * key or with the development key. A verify-only server (`jwt:verify-only`) holds `public-key`
 * and the previous public keys, and nothing that can sign. Outside production a missing signing
 * key logs a warning and the public development key is used.
 */
export function resolveEd25519Keys(config: PortcullisConfig, logger: Logger): SigningKey {
  const { signingKey, publicKey, previousPublicKeys, jwt } = config.security;
  const previous = previousPublicKeys.map((pem, i) => readPublicKey(pem, `svc:security:previous-public-keys[${i}]`));
  if (jwt.verifyOnly) {
    const active = readPublicKey(publicKey ?? '', 'svc:security:public-key');
    return keyRing('EdDSA', active, undefined, previous, isDevelopmentKey(active));
  }
  if (signingKey === undefined || signingKey.isEmpty) {
    if (config.production) refuse('svc:security:signing-key', 'is unset: EdDSA needs a PKCS#8 PEM Ed25519 private key (SVC__SECURITY__SIGNING_KEY)');
    logger.warn('svc:security:signing-key is unset; using the public Ed25519 development key, which anyone can sign tokens with. Set SVC__SECURITY__SIGNING_KEY before production.');
    return keyRing('EdDSA', createPublicKey(DEVELOPMENT_ED25519_KEY), DEVELOPMENT_ED25519_KEY, previous, true);
  }
  const privateKey = readPrivateKey(signingKey.reveal(), 'svc:security:signing-key');
  const active = createPublicKey(privateKey);
  const isDevelopment = isDevelopmentKey(active);
  if (isDevelopment && config.production) refuse('svc:security:signing-key', 'is the public development key');
  return keyRing('EdDSA', active, privateKey, previous, isDevelopment);
}
