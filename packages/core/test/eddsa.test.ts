import 'reflect-metadata';
import { createHash, createHmac, createPublicKey, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import * as jose from 'jose';
import { describe, expect, it, vi } from 'vitest';
import { b64url, decodePart, goodClaims, setup, TEST_KEY } from './support/jwt-kit.js';
import { loadConfig } from '../src/config/load-config.js';
import type { Logger } from '../src/contracts/logger.js';
import { PortcullisError } from '../src/errors/portcullis-error.js';
import { AccessTokenIssuer } from '../src/jwt/access-token-issuer.js';
import { JwtTokenIssuer } from '../src/jwt/jwt-token-issuer.js';
import { JwtTokenValidator } from '../src/jwt/jwt-token-validator.js';
import { resolveSigningKey } from '../src/key/key-guard.js';

const pemPair = () => {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return {
    privatePem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    publicPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    privateKey,
    publicKey,
  };
};
const ACTIVE = pemPair();
const PREVIOUS = pemPair();
const spkiKid = (key: KeyObject) => createHash('sha256').update(key.export({ type: 'spki', format: 'der' })).digest('base64url').slice(0, 16);
const silent = () => ({ debug: vi.fn(), info: vi.fn(), warn: vi.fn(), error: vi.fn() }) satisfies Logger;

/** A full EdDSA server (signs with ACTIVE, still verifies PREVIOUS). */
const eddsa = (env: Record<string, string> = {}) =>
  setup({ SVC__SECURITY__JWT__ALGORITHM: 'EdDSA', SVC__SECURITY__SIGNING_KEY: ACTIVE.privatePem, SVC__SECURITY__PREVIOUS_PUBLIC_KEYS: PREVIOUS.publicPem, ...env });

/** A token signed by hand with an Ed25519 private key. */
function edToken(privateKey: KeyObject, header: object, payload: object = goodClaims()): string {
  const input = `${b64url(header)}.${b64url(payload)}`;
  return `${input}.${sign(null, Buffer.from(input), privateKey).toString('base64url')}`;
}

function hs256(secret: Buffer | string, header: object, payload: object = goodClaims()): string {
  const input = `${b64url(header)}.${b64url(payload)}`;
  return `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`;
}

describe('EdDSA signing', () => {
  const { issuer, pairs, validator, key } = eddsa();

  it('signs with alg EdDSA and kid = first 16 characters of base64url(SHA-256(SPKI DER))', () => {
    const { token } = issuer.issue('player-42', { role: 'player' });
    expect(decodePart(token, 0)).toEqual({ alg: 'EdDSA', typ: 'at+jwt', kid: spkiKid(ACTIVE.publicKey) });
    expect(token.split('.')[2]).toHaveLength(86);
    expect(validator.validate(token)).toMatchObject({ ok: true, principal: { id: 'player-42', roles: ['player'] } });
    expect(validator.validate(pairs.issueLoginPair('player-42').refreshToken, 'refresh').ok).toBe(true);
    expect(key.kid).toBe(spkiKid(ACTIVE.publicKey));
  });

  it('interoperates with jose in both directions', async () => {
    const { token } = issuer.issue('player-42');
    const verified = await jose.jwtVerify(token, ACTIVE.publicKey, { algorithms: ['EdDSA'], issuer: 'portcullis', audience: 'portcullis' });
    expect(verified.payload.sub).toBe('player-42');
    const theirs = await new jose.SignJWT(goodClaims()).setProtectedHeader({ alg: 'EdDSA', typ: 'at+jwt', kid: key.kid }).sign(ACTIVE.privateKey);
    expect(validator.validate(theirs).ok).toBe(true);
  });

  it('verifies tokens of a previous public key by kid, and refuses an unknown kid', () => {
    const old = edToken(PREVIOUS.privateKey, { alg: 'EdDSA', typ: 'at+jwt', kid: spkiKid(PREVIOUS.publicKey) });
    expect(validator.validate(old).ok).toBe(true);
    const stranger = pemPair();
    expect(validator.validate(edToken(stranger.privateKey, { alg: 'EdDSA', typ: 'at+jwt', kid: spkiKid(stranger.publicKey) }))).toEqual({ ok: false, reason: 'unknown_key' });
    expect(validator.validate(edToken(PREVIOUS.privateKey, { alg: 'EdDSA', typ: 'at+jwt' }))).toEqual({ ok: false, reason: 'bad_signature' });
    expect(validator.validate(edToken(ACTIVE.privateKey, { alg: 'EdDSA', typ: 'at+jwt' })).ok).toBe(true);
  });

  it('refuses a non-canonical or altered signature segment', () => {
    const { token } = issuer.issue('player-42');
    const dot = token.lastIndexOf('.');
    const signature = token.slice(dot + 1);
    const wide = `${token.slice(0, dot + 1)}${String.fromCharCode(0x100 + signature.charCodeAt(0))}${signature.slice(1)}`;
    expect(validator.validate(wide)).toEqual({ ok: false, reason: 'bad_signature' });
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const twin = `${token.slice(0, dot + 1)}${signature.slice(0, 85)}${alphabet[alphabet.indexOf(signature[85]!) ^ 1]}`;
    expect(Buffer.from(twin.slice(dot + 1), 'base64url').equals(Buffer.from(signature, 'base64url'))).toBe(true);
    expect(validator.validate(twin)).toEqual({ ok: false, reason: 'bad_signature' });
  });

  it('publishes the active and previous public keys as a JWK Set, and nothing secret', () => {
    const jwks = validator.jwks()!;
    expect(jwks.keys).toEqual([
      { kty: 'OKP', crv: 'Ed25519', x: ACTIVE.publicKey.export({ format: 'jwk' }).x, kid: spkiKid(ACTIVE.publicKey), alg: 'EdDSA', use: 'sig' },
      { kty: 'OKP', crv: 'Ed25519', x: PREVIOUS.publicKey.export({ format: 'jwk' }).x, kid: spkiKid(PREVIOUS.publicKey), alg: 'EdDSA', use: 'sig' },
    ]);
    expect(JSON.stringify(jwks)).not.toMatch(/"d"/);
    expect(setup().validator.jwks()).toBeUndefined();
  });

  it('lets jose verify our tokens with nothing but the published JWK Set', async () => {
    const keys = jose.createLocalJWKSet(validator.jwks() as unknown as jose.JSONWebKeySet);
    const { token } = issuer.issue('player-42');
    expect((await jose.jwtVerify(token, keys, { algorithms: ['EdDSA'] })).payload.sub).toBe('player-42');
  });
});

describe('algorithm confusion', () => {
  const { validator } = eddsa();
  const publicPem = Buffer.from(ACTIVE.publicPem);
  const spkiDer = ACTIVE.publicKey.export({ type: 'spki', format: 'der' });
  const rawX = Buffer.from(ACTIVE.publicKey.export({ format: 'jwk' }).x!, 'base64url');

  it.each([
    ['the PEM text', publicPem],
    ['the SPKI DER', spkiDer],
    ['the raw 32-byte key', rawX],
  ])('in EdDSA mode refuses an HS256 token signed with %s of the public key as HMAC secret', (_, secret) => {
    for (const kid of [spkiKid(ACTIVE.publicKey), undefined]) {
      const forged = hs256(secret, { alg: 'HS256', typ: 'at+jwt', kid });
      expect(validator.validate(forged)).toEqual({ ok: false, reason: 'wrong_algorithm' });
    }
  });

  it('in EdDSA mode refuses an HS256 token signed with the HMAC key a misconfigured fleet still has', () => {
    const forged = hs256(Buffer.from(TEST_KEY, 'base64'), { alg: 'HS256', typ: 'at+jwt' });
    expect(validator.validate(forged)).toEqual({ ok: false, reason: 'wrong_algorithm' });
  });

  it('in HS256 mode refuses an EdDSA token, even with our kid, and one signed by a key published as a JWK', () => {
    const hmac = setup();
    const ours = edToken(ACTIVE.privateKey, { alg: 'EdDSA', typ: 'at+jwt', kid: hmac.key.kid });
    expect(hmac.validator.validate(ours)).toEqual({ ok: false, reason: 'wrong_algorithm' });
    expect(hmac.validator.validate(eddsa().issuer.issue('p').token)).toEqual({ ok: false, reason: 'wrong_algorithm' });
    const embedded = edToken(ACTIVE.privateKey, { alg: 'EdDSA', typ: 'at+jwt', jwk: ACTIVE.publicKey.export({ format: 'jwk' }) });
    expect(validator.validate(embedded)).toEqual({ ok: false, reason: 'unsupported_header' });
  });
});

describe('the EdDSA key guard', () => {
  const refusal = (env: Record<string, string>) => {
    try {
      resolveSigningKey(loadConfig({ env: { SVC__SECURITY__JWT__ALGORITHM: 'EdDSA', ...env }, tree: {} }), silent());
    } catch (error) {
      expect(error).toBeInstanceOf(PortcullisError);
      expect((error as PortcullisError).code).toBe('key_rejected');
      return (error as PortcullisError).message;
    }
    throw new Error('expected the key guard to refuse');
  };

  it('refuses to start in production without a signing key, or with the development key', () => {
    expect(refusal({ NODE_ENV: 'production' })).toMatch(/signing-key is unset/);
    const development = resolveSigningKey(loadConfig({ env: { SVC__SECURITY__JWT__ALGORITHM: 'EdDSA' }, tree: {} }), silent());
    expect(development.isDevelopment).toBe(true);
    const pem = development.signingKeyObject!.export({ type: 'pkcs8', format: 'pem' }).toString();
    expect(refusal({ NODE_ENV: 'production', SVC__SECURITY__SIGNING_KEY: pem })).toMatch(/signing-key is the public development key/);
  });

  it('warns outside production and signs with the public development key', () => {
    const logger = silent();
    const key = resolveSigningKey(loadConfig({ env: { SVC__SECURITY__JWT__ALGORITHM: 'eddsa' }, tree: {} }), logger);
    expect(key.algorithm).toBe('EdDSA');
    expect(logger.warn).toHaveBeenCalledWith(expect.stringMatching(/signing-key is unset/));
  });

  it('refuses an RSA key, a public key as signing key, a private key as previous key and garbage, without echoing them', () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    expect(refusal({ SVC__SECURITY__SIGNING_KEY: rsa })).toMatch(/rsa key; EdDSA needs an Ed25519 key/);
    expect(refusal({ SVC__SECURITY__SIGNING_KEY: ACTIVE.publicPem })).toMatch(/not a PKCS#8 PEM private key/);
    const garbage = '-----BEGIN PRIVATE KEY-----\nnot really\n-----END PRIVATE KEY-----';
    const message = refusal({ SVC__SECURITY__SIGNING_KEY: garbage });
    expect(message).toMatch(/cannot be read/);
    expect(message).not.toContain('not really');
    expect(refusal({ SVC__SECURITY__SIGNING_KEY: ACTIVE.privatePem, SVC__SECURITY__PREVIOUS_PUBLIC_KEYS: ACTIVE.privatePem })).toMatch(/previous-public-keys\[0\] is not an SPKI PEM public key/);
  });

  it('reads a PEM whose newlines are written as \\n on one environment line', () => {
    const oneLine = ACTIVE.privatePem.trim().replace(/\n/g, '\\n');
    const key = resolveSigningKey(loadConfig({ env: { SVC__SECURITY__JWT__ALGORITHM: 'EdDSA', SVC__SECURITY__SIGNING_KEY: oneLine, NODE_ENV: 'production' }, tree: {} }), silent());
    expect(key.kid).toBe(spkiKid(ACTIVE.publicKey));
  });
});

describe('a verify-only server', () => {
  const env = { SVC__SECURITY__JWT__ALGORITHM: 'EdDSA', SVC__SECURITY__JWT__VERIFY_ONLY: 'true', SVC__SECURITY__PUBLIC_KEY: ACTIVE.publicPem, NODE_ENV: 'production' };
  const config = loadConfig({ env, tree: {} });
  const key = resolveSigningKey(config, silent());

  it('starts in production with the public key alone and accepts the tokens the signing server issues', () => {
    const minted = eddsa().pairs.issueLoginPair('player-42', { role: 'player' });
    const validator = new JwtTokenValidator(config, key);
    expect(validator.validate(minted.accessToken)).toMatchObject({ ok: true, principal: { id: 'player-42', roles: ['player'] } });
    expect(validator.validate(minted.refreshToken, 'refresh').ok).toBe(true);
    expect(validator.jwks()!.keys.map((k) => k.kid)).toEqual([spkiKid(ACTIVE.publicKey)]);
  });

  it('cannot mint a token: it holds no private key and both issuers refuse', () => {
    expect(key.signingKeyObject).toBeUndefined();
    expect([...key.verificationKeys.values()].every((k) => k.type === 'public')).toBe(true);
    expect(() => new AccessTokenIssuer(config, key).issue('player-42')).toThrow(/verify-only/);
    expect(() => new JwtTokenIssuer(config, key).issueLoginPair('player-42')).toThrow(/verify-only/);
  });

  it('refuses what a forger could make from what it holds: the public key as an HMAC secret', () => {
    const validator = new JwtTokenValidator(config, key);
    const forged = hs256(Buffer.from(ACTIVE.publicPem), { alg: 'HS256', typ: 'at+jwt', kid: key.kid });
    expect(validator.validate(forged)).toEqual({ ok: false, reason: 'wrong_algorithm' });
    const relabelled = hs256(createPublicKey(ACTIVE.publicPem).export({ type: 'spki', format: 'der' }), { alg: 'EdDSA', typ: 'at+jwt', kid: key.kid });
    expect(validator.validate(relabelled)).toEqual({ ok: false, reason: 'bad_signature' });
  });

  it('is a configuration error with a signing key, without a public key, or in HS256 mode', () => {
    expect(() => loadConfig({ env: { ...env, SVC__SECURITY__SIGNING_KEY: ACTIVE.privatePem }, tree: {} })).toThrow(/svc:security:signing-key.*must not be set on a verify-only server/);
    expect(() => loadConfig({ env: { ...env, SVC__SECURITY__PUBLIC_KEY: '' }, tree: {} })).toThrow(/svc:security:public-key.*is required/);
    expect(() => loadConfig({ env: { ...env, SVC__SECURITY__JWT__ALGORITHM: 'HS256' }, tree: {} })).toThrow(/svc:security:jwt:verify-only.*requires jwt:algorithm EdDSA/);
  });
});
