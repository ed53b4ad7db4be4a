import 'reflect-metadata';
import { container } from 'tsyringe';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { decodePart, setup } from '../../test/support/jwt-kit.js';
import { PORTCULLIS_CONFIG, SIGNING_KEY } from '../contracts/injection-tokens.js';
import { PortcullisError } from '../errors/portcullis-error.js';
import { JwtTokenIssuer } from './jwt-token-issuer.js';
import { JwtTokenValidator } from './jwt-token-validator.js';

const { config, key, pairs, validator } = setup();

afterEach(() => {
  vi.useRealTimers();
});

describe('JwtTokenIssuer.issueLoginPair', () => {
  it('issues an access token (at+jwt) and a refresh token (refresh+jwt) that are never accepted as each other', () => {
    const pair = pairs.issueLoginPair('player-42', { name: 'alice' });
    expect(decodePart(pair.accessToken, 0)).toEqual({ alg: 'HS256', typ: 'at+jwt', kid: key.kid });
    expect(decodePart(pair.refreshToken, 0)).toEqual({ alg: 'HS256', typ: 'refresh+jwt', kid: key.kid });
    expect(validator.validate(pair.accessToken).ok).toBe(true);
    expect(validator.validate(pair.refreshToken, 'refresh').ok).toBe(true);
    expect(validator.validate(pair.accessToken, 'refresh')).toEqual({ ok: false, reason: 'wrong_type' });
    expect(validator.validate(pair.refreshToken, 'access')).toEqual({ ok: false, reason: 'wrong_type' });
  });

  it('lives access-token-minutes and refresh-token-days', () => {
    vi.useFakeTimers({ now: new Date('2030-01-01T00:00:00Z') });
    const custom = setup({ SVC__SECURITY__ACCESS_TOKEN_MINUTES: '10', SVC__SECURITY__REFRESH_TOKEN_DAYS: '3' }).pairs;
    const pair = custom.issueLoginPair('player-42');
    expect(pair.accessExpiresAt.toISOString()).toBe('2030-01-01T00:10:00.000Z');
    expect(pair.refreshExpiresAt.toISOString()).toBe('2030-01-04T00:00:00.000Z');
    expect(decodePart(pair.accessToken, 1).exp).toBe(pair.accessExpiresAt.getTime() / 1000);
    expect(decodePart(pair.refreshToken, 1).exp).toBe(pair.refreshExpiresAt.getTime() / 1000);
  });

  it('gives both tokens the same fam: a new UUID per login, or the family id passed in', () => {
    const first = pairs.issueLoginPair('player-42');
    expect(first.familyId).toMatch(/^[0-9a-f-]{36}$/);
    expect(decodePart(first.accessToken, 1).fam).toBe(first.familyId);
    expect(decodePart(first.refreshToken, 1).fam).toBe(first.familyId);
    expect(pairs.issueLoginPair('player-42').familyId).not.toBe(first.familyId);
    const rotated = pairs.issueLoginPair('player-42', {}, first.familyId);
    expect(rotated.familyId).toBe(first.familyId);
    expect(decodePart(rotated.refreshToken, 1).fam).toBe(first.familyId);
  });

  it('reports each token’s own jti', () => {
    const pair = pairs.issueLoginPair('player-42');
    expect(pair.accessJti).not.toBe(pair.refreshJti);
    expect(decodePart(pair.accessToken, 1).jti).toBe(pair.accessJti);
    expect(decodePart(pair.refreshToken, 1).jti).toBe(pair.refreshJti);
  });

  it('puts the custom claims in both tokens, under the same rules as the access token issuer', () => {
    const pair = pairs.issueLoginPair('player-42', { role: 'admin' });
    expect(decodePart(pair.accessToken, 1)).toMatchObject({ sub: 'player-42', role: 'admin', iss: 'portcullis', aud: 'portcullis' });
    expect(decodePart(pair.refreshToken, 1)).toMatchObject({ sub: 'player-42', role: 'admin' });
    for (const name of ['fam', 'sub', 'exp', 'jti', '__proto__']) {
      const claims = JSON.parse(`{${JSON.stringify(name)}:"x"}`) as Record<string, unknown>;
      expect(() => pairs.issueLoginPair('player-42', claims)).toThrow(PortcullisError);
    }
  });

  it.each([[''], [42]])('refuses family id %j and an empty subject', (familyId) => {
    expect(() => pairs.issueLoginPair('player-42', {}, familyId as never)).toThrow(expect.objectContaining({ code: 'invalid_request' }));
    expect(() => pairs.issueLoginPair('')).toThrow(expect.objectContaining({ code: 'invalid_request' }));
  });

  it('resolves with its validator through tsyringe constructor injection', () => {
    const child = container.createChildContainer();
    child.register(PORTCULLIS_CONFIG, { useValue: config });
    child.register(SIGNING_KEY, { useValue: key });
    const pair = child.resolve(JwtTokenIssuer).issueLoginPair('player-42');
    expect(child.resolve(JwtTokenValidator).validate(pair.refreshToken, 'refresh').ok).toBe(true);
  });
});
