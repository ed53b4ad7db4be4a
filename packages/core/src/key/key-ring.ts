/**
 * Builds the frozen key ring the key guards answer (internal), and their one refusal.
 */
import type { KeyObject } from 'node:crypto';
import type { SigningKey } from '../contracts/signing-key.js';
import { PortcullisError } from '../errors/portcullis-error.js';
import { keyIdOf } from './key-id.js';

/** Stops start-up naming the setting and the problem, never the key. */
export function refuse(setting: string, problem: string): never {
  throw new PortcullisError('key_rejected', `refusing to start: ${setting} ${problem}`);
}

/** The active key first, then the previous ones; a key listed twice is kept once. */
export function keyRing(algorithm: SigningKey['algorithm'], active: KeyObject, signing: KeyObject | undefined, previous: readonly KeyObject[], isDevelopment: boolean): SigningKey {
  const verificationKeys = new Map<string, KeyObject>();
  for (const key of [active, ...previous]) {
    const kid = keyIdOf(key);
    if (!verificationKeys.has(kid)) verificationKeys.set(kid, key);
  }
  return Object.freeze({ algorithm, keyObject: active, kid: keyIdOf(active), signingKeyObject: signing, verificationKeys, isDevelopment });
}

