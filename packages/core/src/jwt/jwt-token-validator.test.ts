import 'reflect-metadata';
import { MAX_TOKEN_LENGTH } from '@portcullis/protocol';
import jwt from 'jsonwebtoken';
import { describe, expect, it } from 'vitest';
import { ACCESS_HEADER, b64url, forge, goodClaims, hmac, setup } from '../../test/support/jwt-kit.js';

const { key, issuer, pairs, validator } = setup();
const sign = (header: object | string, payload: object | string) => forge(header, payload, { key: key.keyObject });

describe('JwtTokenValidator: accepts what portcullis issued', () => {
  it('answers the claims and the principal of a fresh access token', () => {
    const { token } = issuer.issue('player-42', { name: 'alice', role: 'admin' });
    const result = validator.validate(token);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.claims).toMatchObject({ sub: 'player-42', name: 'alice', iss: 'portcullis', aud: 'portcullis' });
    expect(result.principal).toMatchObject({ id: 'player-42', name: 'alice', roles: ['admin'], via: 'jwt' });
    expect(Object.isFrozen(result.claims)).toBe(true);
  });

  it('accepts a hand-built token with our kid header and an audience array', () => {
    const token = sign({ ...ACCESS_HEADER, kid: key.kid }, { ...goodClaims(), aud: ['other', 'portcullis'] });
    expect(validator.validate(token).ok).toBe(true);
  });

  it('accepts the typ media type case-insensitively and with the application/ prefix', () => {
    expect(validator.validate(sign({ alg: 'HS256', typ: 'application/at+jwt' }, goodClaims())).ok).toBe(true);
    expect(validator.validate(sign({ alg: 'HS256', typ: 'AT+JWT' }, goodClaims())).ok).toBe(true);
  });

  it('interoperates with jsonwebtoken in both directions (plain HS256)', () => {
    const theirs = jwt.sign({ ...goodClaims() }, key.keyObject, { algorithm: 'HS256', header: { alg: 'HS256', typ: 'at+jwt' } });
    expect(validator.validate(theirs).ok).toBe(true);
    const ours = issuer.issue('player-42').token;
    expect(jwt.verify(ours, key.keyObject, { algorithms: ['HS256'], issuer: 'portcullis', audience: 'portcullis' })).toMatchObject({ sub: 'player-42' });
  });
});

describe('JwtTokenValidator: pinned to HS256', () => {
  it.each(['sha384', 'sha512'] as const)('refuses a token signed with the same key using %s', (hash) => {
    const alg = hash === 'sha384' ? 'HS384' : 'HS512';
    const token = forge({ alg, typ: 'at+jwt' }, goodClaims(), { key: key.keyObject, hash });
    expect(jwt.verify(token, key.keyObject)).toBeTruthy();
    expect(validator.validate(token)).toEqual({ ok: false, reason: 'wrong_algorithm' });
  });

  it.each(['none', 'None', 'NONE', 'nOnE'])('refuses alg %s with an empty or a real signature', (alg) => {
    const unsigned = forge({ alg, typ: 'at+jwt' }, goodClaims());
    expect(unsigned.endsWith('.')).toBe(true);
    expect(validator.validate(unsigned)).toEqual({ ok: false, reason: 'wrong_algorithm' });
    const input = `${b64url({ alg, typ: 'at+jwt' })}.${b64url(goodClaims())}`;
    expect(validator.validate(`${input}.${hmac('sha256', key.keyObject, input)}`)).toEqual({ ok: false, reason: 'wrong_algorithm' });
    expect(validator.validate(input)).toEqual({ ok: false, reason: 'malformed' });
  });

  it('refuses an RS256 header carrying an HMAC-SHA256 signature made with our key (key confusion)', () => {
    const token = forge({ alg: 'RS256', typ: 'at+jwt' }, goodClaims(), { key: key.keyObject });
    expect(validator.validate(token)).toEqual({ ok: false, reason: 'wrong_algorithm' });
  });

  it.each([['hs256'], ['HS256 '], [['HS256']], [null], [256]])('refuses alg %j that is not exactly "HS256"', (alg) => {
    expect(validator.validate(sign({ alg, typ: 'at+jwt' }, goodClaims()))).toEqual({ ok: false, reason: 'wrong_algorithm' });
  });

  it('refuses a header without alg', () => {
    expect(validator.validate(sign({ typ: 'at+jwt' }, goodClaims()))).toEqual({ ok: false, reason: 'wrong_algorithm' });
  });
});

describe('JwtTokenValidator: header parameters', () => {
  it.each([
    ['crit', { crit: ['exp'], exp: 1 }],
    ['empty crit', { crit: [] }],
    ['jwk', { jwk: { kty: 'oct', k: 'AAAA' } }],
    ['jku', { jku: 'https://attacker.example/keys' }],
    ['x5u', { x5u: 'https://attacker.example/cert' }],
    ['x5c', { x5c: ['MIIB'] }],
    ['zip', { zip: 'DEF' }],
  ])('refuses a validly signed token with a %s header', (_name, extra) => {
    expect(validator.validate(sign({ ...ACCESS_HEADER, ...extra }, goodClaims()))).toEqual({ ok: false, reason: 'unsupported_header' });
  });
});

describe('JwtTokenValidator: signature', () => {
  const token = issuer.issue('player-42', { role: 'player' }).token;
  const [header, payload, signature] = token.split('.') as [string, string, string];

  it('refuses a payload changed after signing', () => {
    const raised = b64url({ ...JSON.parse(Buffer.from(payload, 'base64url').toString()), role: 'admin' });
    expect(validator.validate(`${header}.${raised}.${signature}`)).toEqual({ ok: false, reason: 'bad_signature' });
  });

  it('refuses a header changed after signing, even to another acceptable header', () => {
    expect(validator.validate(`${b64url({ ...ACCESS_HEADER, kid: key.kid, x: 1 })}.${payload}.${signature}`)).toEqual({ ok: false, reason: 'bad_signature' });
    expect(validator.validate(`${b64url(ACCESS_HEADER)}.${payload}.${signature}`)).toEqual({ ok: false, reason: 'bad_signature' });
  });

  it('refuses a signature by another key, a truncated one, an empty one and a flipped character', () => {
    const other = setup({ SVC__SECURITY__KEY: Buffer.alloc(32, 9).toString('base64') }).issuer.issue('player-42').token;
    expect(validator.validate(other)).toEqual({ ok: false, reason: 'unknown_key' });
    const otherWithOurKid = `${header}.${other.split('.')[1]}.${other.split('.')[2]}`;
    expect(validator.validate(otherWithOurKid)).toEqual({ ok: false, reason: 'bad_signature' });
    expect(validator.validate(`${header}.${payload}.${signature.slice(0, -1)}`)).toEqual({ ok: false, reason: 'bad_signature' });
    expect(validator.validate(`${header}.${payload}.`)).toEqual({ ok: false, reason: 'bad_signature' });
    const flipped = signature[5] === 'A' ? 'B' : 'A';
    expect(validator.validate(`${header}.${payload}.${signature.slice(0, 5)}${flipped}${signature.slice(6)}`).ok).toBe(false);
  });

  it('refuses a non-canonical spelling of the right signature bytes', () => {
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const last = alphabet.indexOf(signature.at(-1)!);
    const variant = `${signature.slice(0, -1)}${alphabet[last ^ 1]}`;
    expect(Buffer.from(variant, 'base64url').equals(Buffer.from(signature, 'base64url'))).toBe(true);
    expect(validator.validate(`${header}.${payload}.${variant}`)).toEqual({ ok: false, reason: 'bad_signature' });
  });

  it('refuses non-ASCII characters in a signature of the right length without throwing', () => {
    for (const c of ['ä', '\u0000', '\uD83D', '€']) {
      expect(validator.validate(`${header}.${payload}.${signature.slice(0, -1)}${c}`)).toEqual({ ok: false, reason: 'bad_signature' });
    }
    expect(validator.validate(`${header}.${payload}.${signature.slice(0, -2)}😀`)).toEqual({ ok: false, reason: 'bad_signature' });
  });

  it('refuses every single-character change of a valid token and never throws', () => {
    const alphabet = 'Aa0_-.=+/ ';
    for (let i = 0; i < token.length; i++) {
      for (const c of alphabet) {
        if (token[i] === c) continue;
        const mutated = `${token.slice(0, i)}${c}${token.slice(i + 1)}`;
        expect(validator.validate(mutated).ok).toBe(false);
      }
    }
  });
});

describe('JwtTokenValidator: structure and payload', () => {
  it.each(['123', '[1]', '"str"', 'null', 'true', '{"sub":', ''])('refuses a validly signed non-object payload %j', (raw) => {
    const token = `${b64url(ACCESS_HEADER)}.${b64url(raw)}`;
    const signed = `${token}.${hmac('sha256', key.keyObject, token)}`;
    expect(validator.validate(signed)).toEqual({ ok: false, reason: 'malformed' });
  });

  it.each(['[1]', '"HS256"', 'not json', '{"alg":"HS256"'])('refuses a header %j that is not a JSON object', (raw) => {
    expect(validator.validate(sign(raw, goodClaims()))).toEqual({ ok: false, reason: 'malformed' });
  });

  it.each(['', 'abc', '.', '..', '...', 'a.b', 'a.b.c.d', 'eyJ.eyJ.', '.eyJ.abc', 'eyJ..abc', '\u0000.\u0000.\u0000', 'ä.ö.ü', 'a b.c d.e f'])(
    'refuses garbage %j as malformed or unsigned without throwing',
    (garbage) => {
      const result = validator.validate(garbage);
      expect(result.ok).toBe(false);
      if (!result.ok) expect(['malformed', 'bad_signature', 'wrong_algorithm']).toContain(result.reason);
    },
  );

  it.each([undefined, null, 42, {}, [], Symbol('t')])('refuses a non-string token %s without throwing', (value) => {
    expect(validator.validate(value as unknown as string)).toEqual({ ok: false, reason: 'malformed' });
  });

  it(`refuses a validly signed token over ${MAX_TOKEN_LENGTH} characters without parsing it`, () => {
    const big = issuer.issue('player-42', { pad: 'x'.repeat(MAX_TOKEN_LENGTH) }).token;
    expect(jwt.verify(big, key.keyObject, { algorithms: ['HS256'] })).toBeTruthy();
    expect(validator.validate(big)).toEqual({ ok: false, reason: 'malformed' });
    const justUnder = issuer.issue('player-42', { pad: 'x'.repeat(5000) }).token;
    expect(justUnder.length).toBeLessThan(MAX_TOKEN_LENGTH);
    expect(validator.validate(justUnder).ok).toBe(true);
  });

  it('keeps a __proto__ claim an inert own property: no prototype change, no pollution', () => {
    const token = sign(ACCESS_HEADER, `{"__proto__":{"polluted":true,"sub":"admin"},${JSON.stringify(goodClaims()).slice(1)}`);
    const result = validator.validate(token);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(Object.getPrototypeOf(result.claims)).toBe(Object.prototype);
    expect(result.claims.sub).toBe('player-42');
    expect((result.claims as Record<string, unknown>).polluted).toBeUndefined();
    expect((result.principal.claims as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.getPrototypeOf(result.principal.claims)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('does not trust a validly signed header for a refresh token on another typ', () => {
    const { accessToken, refreshToken } = pairs.issueLoginPair('player-42');
    expect(validator.validate(accessToken, 'refresh')).toEqual({ ok: false, reason: 'wrong_type' });
    expect(validator.validate(refreshToken)).toEqual({ ok: false, reason: 'wrong_type' });
    expect(validator.validate(refreshToken, 'access')).toEqual({ ok: false, reason: 'wrong_type' });
    expect(validator.validate(refreshToken, 'refresh').ok).toBe(true);
    expect(validator.validate(accessToken, 'bogus' as never)).toEqual({ ok: false, reason: 'wrong_type' });
  });
});
