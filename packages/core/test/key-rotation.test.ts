import 'reflect-metadata';
import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { b64url, decodePart, forge, goodClaims, setup } from './support/jwt-kit.js';
import { loadConfig } from '../src/config/load-config.js';
import type { Logger } from '../src/contracts/logger.js';
import { PortcullisError } from '../src/errors/portcullis-error.js';
import { DEVELOPMENT_KEY, resolveSigningKey } from '../src/key/key-guard.js';
import { keyId } from '../src/key/key-id.js';

const OLD = randomBytes(32).toString('base64');
const NEW = randomBytes(32).toString('base64');
const OLDER = randomBytes(48).toString('base64url');
const bytes = (key: string) => Buffer.from(key, 'base64');
const expectedKid = (key: string) => createHash('sha256').update(bytes(key)).digest('base64url').slice(0, 16);

/** A server of the fleet: its key and previous keys. */
const server = (key: string, previous: string[] = []) => setup({ SVC__SECURITY__KEY: key, SVC__SECURITY__PREVIOUS_KEYS: previous.join(',') });

function guardRefusal(env: Record<string, string>): PortcullisError {
  const logger = { debug: vi.fn(), info: vi.fn(), warn: vi.fn(), error: vi.fn() } satisfies Logger;
  try {
    resolveSigningKey(loadConfig({ env: { NODE_ENV: 'production', SVC__SECURITY__KEY: NEW, ...env }, tree: {} }), logger);
  } catch (error) {
    expect(error).toBeInstanceOf(PortcullisError);
    expect((error as PortcullisError).code).toBe('key_rejected');
    return error as PortcullisError;
  }
  throw new Error('expected the key guard to refuse');
}

describe('kid', () => {
  it('is the first 16 characters of base64url(SHA-256(key bytes)) and is on every signed token', () => {
    const { issuer, pairs, key } = server(NEW);
    expect(keyId(bytes(NEW))).toBe(expectedKid(NEW));
    expect(key.kid).toBe(expectedKid(NEW));
    expect(decodePart(issuer.issue('p').token, 0).kid).toBe(expectedKid(NEW));
    const pair = pairs.issueLoginPair('p');
    expect(decodePart(pair.accessToken, 0).kid).toBe(expectedKid(NEW));
    expect(decodePart(pair.refreshToken, 0).kid).toBe(expectedKid(NEW));
  });

  it('is the same whichever base64 alphabet spells the key', () => {
    expect(server(bytes(NEW).toString('base64url')).key.kid).toBe(server(NEW).key.kid);
  });
});

describe('previous-keys verify but never sign', () => {
  it('accepts tokens of a previous key by kid and signs only with the active key', () => {
    const before = server(OLD).issuer.issue('player-42').token;
    const after = server(NEW, [OLD]);
    expect(after.validator.validate(before).ok).toBe(true);
    const fresh = after.issuer.issue('player-42').token;
    expect(decodePart(fresh, 0).kid).toBe(expectedKid(NEW));
    expect(server(OLD).validator.validate(fresh)).toEqual({ ok: false, reason: 'unknown_key' });
    expect(server(NEW).validator.validate(fresh).ok).toBe(true);
  });

  it('reads a JSON/YAML list as well as comma-separated text, and verifies with each key', () => {
    const config = loadConfig({ env: { SVC__SECURITY__KEY: NEW }, tree: { svc: { security: { 'previous-keys': [OLD, OLDER] } } } });
    expect(config.security.previousKeys.map((k) => k.reveal())).toEqual([OLD, OLDER]);
    expect(JSON.stringify(config.security)).not.toContain(OLD);
    const ring = server(NEW, [OLD, OLDER]);
    expect([...ring.key.verificationKeys.keys()]).toEqual([expectedKid(NEW), expectedKid(OLD), keyId(Buffer.from(OLDER, 'base64url'))]);
    expect(ring.validator.validate(server(OLDER).issuer.issue('p').token).ok).toBe(true);
    expect(ring.validator.validate(server(OLD).pairs.issueLoginPair('p').refreshToken, 'refresh').ok).toBe(true);
  });

  it('refuses a kid that names no configured key, whatever key signed it', () => {
    const { validator, key } = server(NEW, [OLD]);
    const stranger = forge({ alg: 'HS256', typ: 'at+jwt', kid: 'AAAAAAAAAAAAAAAA' }, goodClaims(), { key: key.keyObject });
    expect(validator.validate(stranger)).toEqual({ ok: false, reason: 'unknown_key' });
    expect(validator.validate(forge({ alg: 'HS256', typ: 'at+jwt', kid: 7 }, goodClaims(), { key: key.keyObject }))).toEqual({ ok: false, reason: 'malformed' });
  });

  it('checks a token without kid against the active key only', () => {
    const { validator, key } = server(NEW, [OLD]);
    const old = server(OLD).key;
    expect(validator.validate(forge({ alg: 'HS256', typ: 'at+jwt' }, goodClaims(), { key: key.keyObject })).ok).toBe(true);
    expect(validator.validate(forge({ alg: 'HS256', typ: 'at+jwt' }, goodClaims(), { key: old.keyObject }))).toEqual({ ok: false, reason: 'bad_signature' });
  });

  it('refuses a token whose kid names one configured key but whose signature is by another', () => {
    const { validator } = server(NEW, [OLD]);
    const signedNew = server(NEW).issuer.issue('p').token.split('.');
    const relabelled = `${b64url({ alg: 'HS256', typ: 'at+jwt', kid: expectedKid(OLD) })}.${signedNew[1]}`;
    const withNewSignature = `${relabelled}.${signedNew[2]}`;
    expect(validator.validate(withNewSignature)).toEqual({ ok: false, reason: 'bad_signature' });
  });
});

describe('the key guard checks every previous key in production', () => {
  it('refuses the development key, a short key and text that is not base64, naming the entry and never the key', () => {
    const development = guardRefusal({ SVC__SECURITY__PREVIOUS_KEYS: `${OLD},${DEVELOPMENT_KEY}` });
    expect(development.message).toMatch(/previous-keys\[1\] is the public development key/);
    const short = randomBytes(16).toString('base64');
    const tooShort = guardRefusal({ SVC__SECURITY__PREVIOUS_KEYS: short });
    expect(tooShort.message).toMatch(/previous-keys\[0\] decodes to 16 bytes/);
    expect(tooShort.message).not.toContain(short);
    expect(guardRefusal({ SVC__SECURITY__PREVIOUS_KEYS: 'not base64 at all!' }).message).toMatch(/previous-keys\[0\] is not base64/);
  });

  it('starts in production with strong previous keys', () => {
    const config = loadConfig({ env: { NODE_ENV: 'production', SVC__SECURITY__KEY: NEW, SVC__SECURITY__PREVIOUS_KEYS: ` ${OLD} , ${OLDER} ` }, tree: {} });
    const logger = { debug: vi.fn(), info: vi.fn(), warn: vi.fn(), error: vi.fn() } satisfies Logger;
    expect(resolveSigningKey(config, logger).verificationKeys.size).toBe(3);
    expect(logger.warn).not.toHaveBeenCalled();
  });
});

describe('the rotation runbook, on a fleet of two servers', () => {
  it('keeps every token valid on every server at every step, then drops the old key', () => {
    // Step 0: both servers sign with OLD.
    let a = server(OLD);
    let b = server(OLD);
    const fromStart = a.pairs.issueLoginPair('player-42');
    // Step 1: add NEW as previous everywhere and deploy (one server at a time).
    a = server(OLD, [NEW]);
    const duringStep1 = b.issuer.issue('player-42').token;
    b = server(OLD, [NEW]);
    // Step 2: swap active and previous, deploy one server at a time: a signs with NEW while b still signs with OLD.
    a = server(NEW, [OLD]);
    const signedByA = a.issuer.issue('player-42').token;
    const signedByB = b.issuer.issue('player-42').token;
    for (const v of [a.validator, b.validator]) {
      for (const token of [fromStart.accessToken, duringStep1, signedByA, signedByB]) expect(v.validate(token).ok).toBe(true);
      expect(v.validate(fromStart.refreshToken, 'refresh').ok).toBe(true);
    }
    b = server(NEW, [OLD]);
    // Step 3: after the longest token lifetime, drop OLD.
    const final = server(NEW);
    expect(final.validator.validate(signedByA).ok).toBe(true);
    expect(final.validator.validate(signedByB)).toEqual({ ok: false, reason: 'unknown_key' });
    expect(b.validator.validate(signedByB).ok).toBe(true);
  });
});
