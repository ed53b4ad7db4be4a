import type { KeyObject } from 'node:crypto';

/**
 * The keys tokens are signed and verified with, made into `KeyObject`s once by the key guard.
 *
 * @example
 * ```ts
 * const { algorithm, kid, verificationKeys, isDevelopment }: SigningKey = container.resolve(SIGNING_KEY);
 * verificationKeys.get(kid) === keyObject; // the active key verifies too
 * ```
 */
export interface SigningKey {
  /** The one algorithm tokens are signed and verified with. */
  readonly algorithm: 'HS256' | 'EdDSA';
  /** The active verification key: the HMAC secret (HS256) or the Ed25519 public key (EdDSA). */
  readonly keyObject: KeyObject;
  /** The `kid` of the active key. */
  readonly kid: string;
  /** What tokens are signed with (the HMAC secret or the Ed25519 private key); undefined on a verify-only server. */
  readonly signingKeyObject: KeyObject | undefined;
  /** Every key that verifies, by `kid`: the active key and the previous ones. */
  readonly verificationKeys: ReadonlyMap<string, KeyObject>;
  /** True when the public development key is in use. */
  readonly isDevelopment: boolean;
}
