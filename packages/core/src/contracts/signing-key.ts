import type { KeyObject } from 'node:crypto';

/**
 * The HMAC key every token is signed and checked with, made into a `KeyObject` once.
 *
 * @example
 * ```ts
 * const { keyObject, isDevelopment }: SigningKey = container.resolve(SIGNING_KEY);
 * ```
 */
export interface SigningKey {
  readonly keyObject: KeyObject;
  /** True when the public development key is in use. */
  readonly isDevelopment: boolean;
}
