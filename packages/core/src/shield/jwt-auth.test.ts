import 'reflect-metadata';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { authContext, createShieldFixture, UNREACHABLE_REDIS, type ShieldFixture } from '../../test/support/shield-fixture.js';
import type { AuthContext } from '../contracts/auth-context.js';
import { JwtTokenValidator } from '../jwt/jwt-token-validator.js';
import { JwtAuth } from './jwt-auth.js';

let fx: ShieldFixture;
let auth: JwtAuth;

/** Every request in this file arrives over WebSocket. */
const ctx = (credential: string | undefined, memo?: Map<unknown, unknown>): AuthContext => authContext('ws', credential, memo);

beforeEach(async () => {
  fx = await createShieldFixture();
  auth = fx.container.resolve(JwtAuth);
});

afterEach(async () => {
  vi.useRealTimers();
  vi.restoreAllMocks();
  await fx.close();
});

describe('JwtAuth', () => {
  it('accepts a valid JWT access token and answers its principal', async () => {
    const result = await auth.authenticate(ctx(fx.jwt('player-1', { role: 'admin', name: 'Ann' })));
    expect(result).toMatchObject({ ok: true, principal: { id: 'player-1', roles: ['admin'], via: 'jwt' } });
  });

  it('refuses a missing credential, a session token, a refresh token and garbage as unauthorized', async () => {
    const session = await fx.session('player-1');
    const refresh = fx.issuer.issueLoginPair('player-1').refreshToken;
    for (const credential of [undefined, '', session, refresh, 'not-a-token', 'a.b.']) {
      expect(await auth.authenticate(ctx(credential))).toMatchObject({ ok: false, code: 'unauthorized' });
    }
  });

  it('refuses a JWT that was upgraded to a session', async () => {
    const jwt = fx.jwt('player-1');
    expect((await auth.authenticate(ctx(jwt))).ok).toBe(true);
    await fx.sessions.upgrade(jwt);
    expect(await auth.authenticate(ctx(jwt))).toMatchObject({ ok: false, code: 'unauthorized' });
  });

  it('refuses a revoked JWT even while its signature check is kept on the connection', async () => {
    const memo = new Map();
    const jwt = fx.jwt('player-1');
    expect((await auth.authenticate(ctx(jwt, memo))).ok).toBe(true);
    await fx.sessions.revoke(jwt);
    expect(await auth.authenticate(ctx(jwt, memo))).toMatchObject({ ok: false, code: 'unauthorized', message: 'token refused: revoked' });
  });

  it('checks the signature once per connection and expiry on every request', async () => {
    vi.useFakeTimers({ now: new Date('2030-01-01T00:00:00Z'), toFake: ['Date'] });
    const validate = vi.spyOn(JwtTokenValidator.prototype, 'validate');
    const memo = new Map();
    const jwt = fx.jwt('player-1');
    const first = await auth.authenticate(ctx(jwt, memo));
    expect(await auth.authenticate(ctx(jwt, memo))).toBe(first);
    expect(validate).toHaveBeenCalledTimes(1);
    vi.setSystemTime(new Date('2030-01-01T00:16:00Z'));
    expect(await auth.authenticate(ctx(jwt, memo))).toMatchObject({ ok: false, code: 'unauthorized', message: 'token refused: expired' });
  });

  it('answers unavailable, and no principal, when the invalidation store is down', async () => {
    const down = await createShieldFixture(UNREACHABLE_REDIS, { waitForStore: false });
    try {
      const result = down.container.resolve(JwtAuth).authenticate(ctx(down.jwt('player-1')));
      expect(result).toBeInstanceOf(Promise);
      expect(await result).toEqual({ ok: false, code: 'unavailable', message: 'authentication is temporarily unavailable', retryAfterMs: 1000 });
    } finally {
      await down.close();
    }
  });

  it('answers at once, without a promise, when the in-memory store can tell', async () => {
    const jwt = fx.jwt('player-1');
    expect(auth.authenticate(ctx(jwt))).toMatchObject({ ok: true, principal: { id: 'player-1' } });
    await fx.sessions.upgrade(jwt);
    expect(auth.authenticate(ctx(jwt))).toMatchObject({ ok: false, code: 'unauthorized', message: 'token refused: revoked' });
  });

  it('answers a JWT it accepted before from memory, and refuses it at once once it is upgraded or logged out with itself', async () => {
    const upgraded = fx.jwt('player-5');
    const loggedOut = fx.jwt('player-6');
    for (const jwt of [upgraded, loggedOut]) expect(auth.authenticate(ctx(jwt))).toMatchObject({ ok: true });
    await fx.sessions.upgrade(upgraded);
    await fx.sessions.revoke(loggedOut);
    for (const jwt of [upgraded, loggedOut]) {
      expect(auth.authenticate(ctx(jwt))).toEqual({ ok: false, code: 'unauthorized', message: 'token refused: revoked' });
    }
  });

  it('refuses at once, on the synchronous path, every kind of invalidation', async () => {
    const memo = new Map();
    // revokeAllFor: every JWT of the principal issued up to now.
    const everything = fx.jwt('player-2');
    expect(auth.authenticate(ctx(everything, memo))).toMatchObject({ ok: true });
    await fx.sessions.revokeAllFor('player-2');
    expect(auth.authenticate(ctx(everything, memo))).toEqual({ ok: false, code: 'unauthorized', message: 'token refused: revoked' });
    // Logout with the refresh token of the same login: the whole family.
    const login = fx.issuer.issueLoginPair('player-3');
    expect(auth.authenticate(ctx(login.accessToken))).toMatchObject({ ok: true });
    await fx.sessions.revoke(login.refreshToken);
    expect(auth.authenticate(ctx(login.accessToken))).toEqual({ ok: false, code: 'unauthorized', message: 'token refused: revoked' });
    // Issued before this store's data began (an earlier process, whose logouts are lost).
    vi.useFakeTimers({ now: Date.now() - 120_000, toFake: ['Date'] });
    const older = fx.jwt('player-4');
    vi.useRealTimers();
    expect(auth.authenticate(ctx(older))).toEqual({ ok: false, code: 'unauthorized', message: 'token refused: revoked' });
  });

  it('names the JWT it accepted (token, jti), for the connection registry', async () => {
    const pair = fx.issuer.issueLoginPair('player-1');
    const verified = await auth.authenticate(ctx(pair.accessToken));
    expect(verified).toMatchObject({ ok: true, principal: { id: 'player-1' }, credential: { kind: 'jwt', token: pair.accessToken, jti: pair.accessJti } });
  });
});
