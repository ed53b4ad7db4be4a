/**
 * Test kit for the JWT suites: builds config, key and services from an isolated
 * environment, and forges compact JWS tokens by hand for attack tests.
 */
import { createHmac, type KeyObject } from 'node:crypto';
import { loadConfig } from '../../src/config/load-config.js';
import { resolveSigningKey } from '../../src/key/key-guard.js';
import { silentLoggerFactory } from '../../src/logging/logger.js';
import { AccessTokenIssuer } from '../../src/jwt/access-token-issuer.js';
import { JwtTokenIssuer } from '../../src/jwt/jwt-token-issuer.js';
import { JwtTokenValidator } from '../../src/jwt/jwt-token-validator.js';

/** A 32-byte test key (base64). */
export const TEST_KEY = Buffer.from('0123456789abcdef0123456789abcdef').toString('base64');

export function setup(env: Record<string, string> = {}) {
  const config = loadConfig({ env: { SVC__SECURITY__KEY: TEST_KEY, ...env }, tree: {} });
  const key = resolveSigningKey(config, silentLoggerFactory.create('test'));
  return {
    config,
    key,
    issuer: new AccessTokenIssuer(config, key),
    pairs: new JwtTokenIssuer(config, key),
    validator: new JwtTokenValidator(config, key),
  };
}

export const b64url = (part: string | object): string =>
  Buffer.from(typeof part === 'string' ? part : JSON.stringify(part)).toString('base64url');

export function decodePart(token: string, index: 0 | 1): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[index]!, 'base64url').toString('utf8'));
}

export function hmac(hash: 'sha256' | 'sha384' | 'sha512', key: KeyObject, input: string): string {
  return createHmac(hash, key).update(input).digest('base64url');
}

/**
 * Builds `header.payload.signature`. Header and payload are JSON-encoded unless given as
 * raw strings (`raw: true`); the signature is HMAC-`hash` with `key`, or `signature` verbatim.
 */
export function forge(
  header: object | string,
  payload: object | string,
  options: { key?: KeyObject; hash?: 'sha256' | 'sha384' | 'sha512'; signature?: string } = {},
): string {
  const input = `${b64url(header)}.${b64url(payload)}`;
  const signature = options.signature ?? (options.key ? hmac(options.hash ?? 'sha256', options.key, input) : '');
  return `${input}.${signature}`;
}

/** Claims our validator accepts, at `now` (seconds). */
export function goodClaims(now = Math.floor(Date.now() / 1000)): Record<string, unknown> {
  return { iss: 'portcullis', aud: 'portcullis', sub: 'player-42', jti: 'jti-1', iat: now, nbf: now, exp: now + 600 };
}

export const ACCESS_HEADER = Object.freeze({ alg: 'HS256', typ: 'at+jwt' });
