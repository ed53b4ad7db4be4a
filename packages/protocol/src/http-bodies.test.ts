import { describe, expect, it } from 'vitest';
import { readLoginResponse, readUpgradeResponse, refreshResponseKind } from './http-bodies.js';

const session = { accessToken: 'a;session', refreshToken: 'r;session', accessExpiration: '2030-01-01T00:00:00.000Z', refreshExpiration: '2030-01-02T00:00:00.000Z' };

describe('HTTP credential bodies', () => {
  it('reads a login response and an upgrade response', () => {
    expect(readLoginResponse({ accessToken: 'a', refreshToken: 'r', extra: 1 })).toEqual({ accessToken: 'a', refreshToken: 'r' });
    expect(readUpgradeResponse({ ...session, extra: 1 })).toEqual(session);
  });

  it('answers undefined when a token is missing or empty, or an expiration is not a date', () => {
    for (const body of [undefined, null, 'x', {}, { accessToken: 'a' }, { accessToken: '', refreshToken: 'r' }, { accessToken: 1, refreshToken: 'r' }]) {
      expect(readLoginResponse(body)).toBeUndefined();
    }
    expect(readUpgradeResponse({ ...session, accessExpiration: 'soon' })).toBeUndefined();
    expect(readUpgradeResponse({ accessToken: 'a', refreshToken: 'r' })).toBeUndefined();
  });

  it('keeps the udpKey of an upgrade response when it is a non-empty string, and reads one without it', () => {
    const udpKey = 't-zxekRCQnUCxGPv_Q-NhXhhqaHvxD_S34wvFryQUnU';
    expect(readUpgradeResponse({ ...session, udpKey })).toEqual({ ...session, udpKey });
    expect(readUpgradeResponse({ ...session, udpKey: 7 })).toEqual(session);
    expect(readUpgradeResponse({ ...session, udpKey: '' })).toEqual(session);
  });

  it('tells a session refresh from a login refresh by its expirations', () => {
    expect(refreshResponseKind(session)).toBe('session');
    expect(refreshResponseKind({ accessToken: 'a', refreshToken: 'r' })).toBe('login');
  });
});
