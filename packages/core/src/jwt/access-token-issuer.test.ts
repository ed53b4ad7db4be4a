import 'reflect-metadata';
import { container } from 'tsyringe';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { decodePart, setup } from '../../test/support/jwt-kit.js';
import { PORTCULLIS_CONFIG, SIGNING_KEY } from '../contracts/injection-tokens.js';
import { PortcullisError } from '../errors/portcullis-error.js';
import { AccessTokenIssuer, type IAccessTokenIssuer } from './access-token-issuer.js';

const { config, key, issuer, validator } = setup();
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

function refusal(fn: () => unknown): PortcullisError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(PortcullisError);
    return error as PortcullisError;
  }
  throw new Error('expected a PortcullisError');
}

afterEach(() => {
  vi.useRealTimers();
});

describe('AccessTokenIssuer.issue', () => {
  it('signs HS256 with typ at+jwt and carries sub, custom claims, jti, iat, nbf, exp, iss and aud', () => {
    vi.useFakeTimers({ now: new Date('2030-06-01T12:00:00Z') });
    const t = Date.now() / 1000;
    const { token, expiresInSeconds } = issuer.issue('player-42', { name: 'alice', level: 7 });
    expect(decodePart(token, 0)).toEqual({ alg: 'HS256', typ: 'at+jwt', kid: key.kid });
    const payload = decodePart(token, 1);
    expect(payload).toMatchObject({ sub: 'player-42', name: 'alice', level: 7, iss: 'portcullis', aud: 'portcullis', iat: t, nbf: t, exp: t + 900 });
    expect(payload.jti).toMatch(UUID);
    expect(payload).not.toHaveProperty('fam');
    expect(expiresInSeconds).toBe(900);
    expect(validator.validate(token).ok).toBe(true);
  });

  it('defaults the lifetime to access-token-minutes and honours a per-call lifetime', () => {
    const custom = setup({ SVC__SECURITY__ACCESS_TOKEN_MINUTES: '5' }).issuer;
    expect(custom.issue('p').expiresInSeconds).toBe(300);
    const { token, expiresInSeconds } = custom.issue('p', {}, 42);
    const payload = decodePart(token, 1);
    expect(expiresInSeconds).toBe(42);
    expect((payload.exp as number) - (payload.iat as number)).toBe(42);
  });

  it('gives every token its own jti', () => {
    const jtis = new Set(Array.from({ length: 50 }, () => decodePart(issuer.issue('p').token, 1).jti));
    expect(jtis.size).toBe(50);
  });

  it.each([[''], [undefined], [null], [42], [{}]])('refuses subject %j with invalid_request', (subject) => {
    expect(refusal(() => issuer.issue(subject as never)).code).toBe('invalid_request');
  });

  it.each([[0], [-1], [1.5], [Number.NaN], [Number.POSITIVE_INFINITY], ['60'], [3650 * 86400 + 1]])('refuses lifetime %j with invalid_request', (lifetime) => {
    expect(refusal(() => issuer.issue('p', {}, lifetime as never)).code).toBe('invalid_request');
  });

  it.each([[null], [[]], ['claims'], [42]])('refuses claims %j that are not a plain object', (claims) => {
    expect(refusal(() => issuer.issue('p', claims as never)).code).toBe('invalid_request');
  });

  it('refuses claims that are not JSON-serialisable', () => {
    expect(refusal(() => issuer.issue('p', { big: 10n })).code).toBe('invalid_request');
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(refusal(() => issuer.issue('p', cyclic)).code).toBe('invalid_request');
  });
});

describe('AccessTokenIssuer: registered claims cannot be overridden', () => {
  it.each(['sub', 'jti', 'iat', 'nbf', 'exp', 'iss', 'aud', 'fam', 'typ'])('throws invalid_request for a custom %s claim, naming it but not its value', (name) => {
    const error = refusal(() => issuer.issue('player-42', { [name]: 'secret-value-9' }));
    expect(error.code).toBe('invalid_request');
    expect(error.message).toContain(`"${name}"`);
    expect(error.message).not.toContain('secret-value-9');
    expect(refusal(() => issuer.withClaims({ [name]: 1 })).code).toBe('invalid_request');
  });

  it('refuses a __proto__ claim from JSON.parse, and nothing is polluted', () => {
    const hostile = JSON.parse('{"__proto__":{"x":1,"sub":"admin","exp":9999999999}}') as Record<string, unknown>;
    expect(refusal(() => issuer.issue('player-42', hostile)).code).toBe('invalid_request');
    expect(refusal(() => issuer.withClaims(hostile)).code).toBe('invalid_request');
    expect(({} as Record<string, unknown>).x).toBeUndefined();
    expect(Object.prototype).not.toHaveProperty('sub');
  });

  it('carries constructor and prototype named claims as plain data', () => {
    const { token } = issuer.issue('player-42', { constructor: 'c', prototype: 'p' });
    const result = validator.validate(token);
    expect(result.ok && result.claims.constructor).toBe('c');
    expect(result.ok && result.claims.sub).toBe('player-42');
  });

  it('refuses claims that hide sub or exp behind a prototype: only plain objects are signed', () => {
    const sneaky = Object.create({ sub: 'admin', exp: 9999999999 }) as Record<string, unknown>;
    sneaky.level = 3;
    expect(refusal(() => issuer.issue('player-42', sneaky)).code).toBe('invalid_request');
  });
});

describe('AccessTokenIssuer.withClaims', () => {
  it('returns a new issuer and leaves the original untouched', () => {
    const derived = issuer.withClaims({ guild: 'north' });
    expect(derived).not.toBe(issuer);
    expect(derived).toBeInstanceOf(AccessTokenIssuer);
    expect(issuer.claims).toEqual({});
    expect(decodePart(issuer.issue('p').token, 1)).not.toHaveProperty('guild');
    expect(decodePart(derived.issue('p').token, 1)).toMatchObject({ guild: 'north' });
  });

  it('merges: chained withClaims and per-call claims add to and override bound claims, per call only', () => {
    const a = issuer.withClaims({ guild: 'north', rank: 1 });
    const b = a.withClaims({ rank: 2 });
    expect(a.claims).toEqual({ guild: 'north', rank: 1 });
    expect(b.claims).toEqual({ guild: 'north', rank: 2 });
    expect(decodePart(b.issue('p', { rank: 3, extra: true }).token, 1)).toMatchObject({ guild: 'north', rank: 3, extra: true });
    expect(b.claims).toEqual({ guild: 'north', rank: 2 });
  });

  it('copies the claims, so changing the input object later changes nothing', () => {
    const input: Record<string, unknown> = { guild: 'north' };
    const derived = issuer.withClaims(input);
    input.guild = 'south';
    input.role = 'admin';
    expect(decodePart(derived.issue('p').token, 1)).toMatchObject({ guild: 'north' });
    expect(decodePart(derived.issue('p').token, 1)).not.toHaveProperty('role');
    expect(Object.isFrozen(derived.claims)).toBe(true);
  });

  it('keeps the configuration and key of the original', () => {
    const derived = setup({ SVC__SECURITY__ACCESS_TOKEN_MINUTES: '2' }).issuer.withClaims({ a: 1 });
    const { token, expiresInSeconds } = derived.issue('p');
    expect(expiresInSeconds).toBe(120);
    expect(validator.validate(token).ok).toBe(true);
  });

  it('is usable through the interface IAccessTokenIssuer', () => {
    const byInterface: IAccessTokenIssuer = issuer;
    expect(validator.validate(byInterface.withClaims({ a: 1 }).issue('p').token).ok).toBe(true);
  });
});

describe('AccessTokenIssuer with tsyringe', () => {
  it('resolves by constructor injection of PORTCULLIS_CONFIG and SIGNING_KEY', () => {
    const child = container.createChildContainer();
    child.register(PORTCULLIS_CONFIG, { useValue: config });
    child.register(SIGNING_KEY, { useValue: key });
    const resolved = child.resolve(AccessTokenIssuer);
    expect(validator.validate(resolved.issue('player-42').token).ok).toBe(true);
  });
});

describe('AccessTokenIssuer.issueForLogin', () => {
  const loginPrincipal = (fam?: string) => ({ id: 'player-42', name: 'alice', roles: [], claims: fam === undefined ? {} : { fam }, via: 'jwt' as const });

  it("carries the caller's id as sub and the caller's login family as fam, so ending the login ends the token", () => {
    const { token, expiresInSeconds } = issuer.issueForLogin(loginPrincipal('family-1'), { scope: 'match' }, 300);
    expect(decodePart(token, 1)).toMatchObject({ sub: 'player-42', fam: 'family-1', scope: 'match' });
    expect(expiresInSeconds).toBe(300);
    const checked = validator.validate(token);
    expect(checked.ok && checked.claims.fam).toBe('family-1');
  });

  it('gives a caller without a login family a token without one', () => {
    expect(decodePart(issuer.issueForLogin(loginPrincipal()).token, 1)).not.toHaveProperty('fam');
  });

  it("refuses a lifetime longer than the login's longest token (refresh-token-days)", () => {
    const week = config.security.refreshTokenDays * 86_400;
    expect(issuer.issueForLogin(loginPrincipal('f'), {}, week).expiresInSeconds).toBe(week);
    expect(refusal(() => issuer.issueForLogin(loginPrincipal('f'), {}, week + 1)).code).toBe('invalid_request');
    expect(refusal(() => issuer.issueForLogin({ ...loginPrincipal('f'), id: '' })).code).toBe('invalid_request');
  });
});
