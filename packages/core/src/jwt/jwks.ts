/**
 * The JWK Set of the public verification keys (RFC 7517, RFC 8037 for Ed25519).
 */
import type { KeyObject } from 'node:crypto';

/**
 * One Ed25519 public key as published at `GET /auth/jwks.json`.
 *
 * @example
 * ```ts
 * const jwk: PublicJwk = { kty: 'OKP', crv: 'Ed25519', x: '11qYAYKx…', kid: 'q3fXK0b8ZtM1v9cA', alg: 'EdDSA', use: 'sig' };
 * ```
 */
export interface PublicJwk {
  readonly kty: 'OKP';
  readonly crv: 'Ed25519';
  readonly x: string;
  readonly kid: string;
  readonly alg: 'EdDSA';
  readonly use: 'sig';
}

/**
 * A JWK Set: the active key first, then the previous ones.
 *
 * @example
 * ```ts
 * const { keys }: JsonWebKeySet = await (await fetch('https://game.example/auth/jwks.json')).json();
 * ```
 */
export interface JsonWebKeySet {
  readonly keys: readonly PublicJwk[];
}

/** The JWK Set of Ed25519 public keys by `kid`; a secret or private key is never exported. */
export function toJwks(keys: ReadonlyMap<string, KeyObject>): JsonWebKeySet {
  const jwks: PublicJwk[] = [];
  for (const [kid, key] of keys) {
    if (key.type !== 'public' || key.asymmetricKeyType !== 'ed25519') continue;
    const { x } = key.export({ format: 'jwk' });
    jwks.push(Object.freeze({ kty: 'OKP', crv: 'Ed25519', x: x!, kid, alg: 'EdDSA', use: 'sig' }));
  }
  return Object.freeze({ keys: Object.freeze(jwks) });
}
