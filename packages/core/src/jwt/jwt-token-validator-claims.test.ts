import 'reflect-metadata';
import jwt from 'jsonwebtoken';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ACCESS_HEADER, forge, goodClaims, setup } from '../../test/support/jwt-kit.js';

const { key, issuer, validator } = setup();
const sign = (payload: object, header: object = ACCESS_HEADER) => forge(header, payload, { key: key.keyObject });
const now = () => Math.floor(Date.now() / 1000);
const without = (name: string) => {
  const claims = goodClaims();
  delete claims[name];
  return claims;
};

afterEach(() => {
  vi.useRealTimers();
});

describe('JwtTokenValidator: exp is required and enforced', () => {
  it('refuses a token without exp (which jsonwebtoken alone would accept)', () => {
    const token = sign(without('exp'));
    expect(jwt.verify(token, key.keyObject, { algorithms: ['HS256'] })).toBeTruthy();
    expect(validator.validate(token)).toEqual({ ok: false, reason: 'missing_claim' });
  });

  it.each([['a string', '9999999999'], ['null', null], ['an object', {}], ['a boolean', true]])('refuses exp that is %s', (_kind, exp) => {
    expect(validator.validate(sign({ ...goodClaims(), exp }))).toEqual({ ok: false, reason: 'malformed' });
  });

  it('accepts until exp plus clock-skew-seconds, then answers expired', () => {
    vi.useFakeTimers({ now: new Date('2030-01-01T00:00:00Z') });
    const { token, expiresInSeconds } = issuer.issue('player-42', undefined, 60);
    expect(expiresInSeconds).toBe(60);
    vi.advanceTimersByTime((60 + 29) * 1000);
    expect(validator.validate(token).ok).toBe(true);
    vi.advanceTimersByTime(1000);
    expect(validator.validate(token)).toEqual({ ok: false, reason: 'expired' });
  });

  it('uses the configured clock-skew-seconds', () => {
    const strict = setup({ SVC__SECURITY__CLOCK_SKEW_SECONDS: '0' });
    vi.useFakeTimers({ now: new Date('2030-01-01T00:00:00Z') });
    const { token } = strict.issuer.issue('player-42', undefined, 60);
    vi.advanceTimersByTime(59_999);
    expect(strict.validator.validate(token).ok).toBe(true);
    vi.advanceTimersByTime(1);
    expect(strict.validator.validate(token)).toEqual({ ok: false, reason: 'expired' });
  });
});

describe('JwtTokenValidator: iat and nbf', () => {
  it('refuses iat in the future beyond the clock skew (which jsonwebtoken alone would accept)', () => {
    const token = sign({ ...goodClaims(), iat: now() + 3600 });
    expect(jwt.verify(token, key.keyObject, { algorithms: ['HS256'] })).toBeTruthy();
    expect(validator.validate(token)).toEqual({ ok: false, reason: 'issued_in_future' });
  });

  it('accepts iat a little ahead, within the clock skew', () => {
    expect(validator.validate(sign({ ...goodClaims(), iat: now() + 20 })).ok).toBe(true);
  });

  it('requires a numeric iat', () => {
    expect(validator.validate(sign(without('iat')))).toEqual({ ok: false, reason: 'missing_claim' });
    expect(validator.validate(sign({ ...goodClaims(), iat: String(now()) }))).toEqual({ ok: false, reason: 'malformed' });
  });

  it('refuses nbf in the future and a non-numeric nbf; nbf is optional', () => {
    expect(validator.validate(sign({ ...goodClaims(), nbf: now() + 120 }))).toEqual({ ok: false, reason: 'not_yet_valid' });
    expect(validator.validate(sign({ ...goodClaims(), nbf: 'soon' }))).toEqual({ ok: false, reason: 'malformed' });
    expect(validator.validate(sign({ ...goodClaims(), nbf: null }))).toEqual({ ok: false, reason: 'malformed' });
    expect(validator.validate(sign(without('nbf'))).ok).toBe(true);
  });
});

describe('JwtTokenValidator: issuer, audience, subject, id', () => {
  it('refuses a wrong or missing iss', () => {
    expect(validator.validate(sign({ ...goodClaims(), iss: 'evil' }))).toEqual({ ok: false, reason: 'wrong_issuer' });
    expect(validator.validate(sign({ ...goodClaims(), iss: ['portcullis'] }))).toEqual({ ok: false, reason: 'wrong_issuer' });
    expect(validator.validate(sign(without('iss')))).toEqual({ ok: false, reason: 'missing_claim' });
  });

  it('refuses a wrong or missing aud', () => {
    expect(validator.validate(sign({ ...goodClaims(), aud: 'elsewhere' }))).toEqual({ ok: false, reason: 'wrong_audience' });
    expect(validator.validate(sign({ ...goodClaims(), aud: ['a', 'b'] }))).toEqual({ ok: false, reason: 'wrong_audience' });
    expect(validator.validate(sign({ ...goodClaims(), aud: 42 }))).toEqual({ ok: false, reason: 'wrong_audience' });
    expect(validator.validate(sign(without('aud')))).toEqual({ ok: false, reason: 'missing_claim' });
  });

  it('uses the configured issuer and audience, so another deployment’s tokens with the same key are refused', () => {
    const other = setup({ SVC__SECURITY__ISSUER: 'realm-b', SVC__SECURITY__AUDIENCE: 'game-b' });
    const theirs = other.issuer.issue('player-42').token;
    expect(other.validator.validate(theirs).ok).toBe(true);
    expect(validator.validate(theirs)).toEqual({ ok: false, reason: 'wrong_issuer' });
    const sameIssuer = setup({ SVC__SECURITY__AUDIENCE: 'game-b' }).issuer.issue('player-42').token;
    expect(validator.validate(sameIssuer)).toEqual({ ok: false, reason: 'wrong_audience' });
  });

  it('requires a non-empty string sub and jti; fam must be a string when present', () => {
    expect(validator.validate(sign(without('sub')))).toEqual({ ok: false, reason: 'missing_claim' });
    expect(validator.validate(sign({ ...goodClaims(), sub: '' }))).toEqual({ ok: false, reason: 'malformed' });
    expect(validator.validate(sign({ ...goodClaims(), sub: 42 }))).toEqual({ ok: false, reason: 'malformed' });
    expect(validator.validate(sign(without('jti')))).toEqual({ ok: false, reason: 'missing_claim' });
    expect(validator.validate(sign({ ...goodClaims(), jti: 7 }))).toEqual({ ok: false, reason: 'malformed' });
    expect(validator.validate(sign({ ...goodClaims(), fam: 7 }))).toEqual({ ok: false, reason: 'malformed' });
    expect(validator.validate(sign({ ...goodClaims(), fam: 'family-1' })).ok).toBe(true);
  });

  it('refuses a token whose header typ is missing or generic', () => {
    expect(validator.validate(sign(goodClaims(), { alg: 'HS256' }))).toEqual({ ok: false, reason: 'wrong_type' });
    expect(validator.validate(sign(goodClaims(), { alg: 'HS256', typ: 'JWT' }))).toEqual({ ok: false, reason: 'wrong_type' });
    expect(validator.validate(sign(goodClaims(), { alg: 'HS256', typ: 'refresh+jwt' }), 'access')).toEqual({ ok: false, reason: 'wrong_type' });
  });
});

describe('JwtTokenValidator: RFC 7515 Appendix A.1', () => {
  const RFC_TOKEN =
    'eyJ0eXAiOiJKV1QiLA0KICJhbGciOiJIUzI1NiJ9' +
    '.eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ' +
    '.dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';
  const RFC_KEY = 'AyM1SysPpbyDfgZld3umj1qzKObwVMkoqQ-EstJQLr_T-1qS0gZH75aKtMN3Yj0iPS4hcgUuTwjAzZr1Z9CAow';

  it('has a valid signature under the RFC key (checked independently)', () => {
    const rfc = setup({ SVC__SECURITY__KEY: RFC_KEY });
    expect(jwt.verify(RFC_TOKEN, rfc.key.keyObject, { algorithms: ['HS256'], ignoreExpiration: true })).toMatchObject({ iss: 'joe' });
  });

  it('is refused as expired when the RFC key is ours: the signature passes, then expiry is the first rule broken', () => {
    expect(setup({ SVC__SECURITY__KEY: RFC_KEY }).validator.validate(RFC_TOKEN)).toEqual({ ok: false, reason: 'expired' });
  });

  it('is refused for its missing iat when the clock is set back to before its expiry', () => {
    const rfc = setup({ SVC__SECURITY__KEY: RFC_KEY });
    vi.useFakeTimers({ now: new Date(1300819300 * 1000) });
    expect(rfc.validator.validate(RFC_TOKEN)).toEqual({ ok: false, reason: 'missing_claim' });
  });

  it('is refused as a bad signature under any other key', () => {
    expect(validator.validate(RFC_TOKEN)).toEqual({ ok: false, reason: 'bad_signature' });
  });
});
