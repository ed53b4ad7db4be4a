import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { authContext, createShieldFixture, UNREACHABLE_REDIS, type ShieldFixture } from '../../test/support/shield-fixture.js';
import type { AuthContext } from '../contracts/auth-context.js';
import { SessionAuth } from './session-auth.js';

let fx: ShieldFixture;
let auth: SessionAuth;

/** Every request in this file arrives over TCP. */
const ctx = (credential: string | undefined, memo?: Map<unknown, unknown>): AuthContext => authContext('tcp', credential, memo);

beforeEach(async () => {
  fx = await createShieldFixture();
  auth = fx.container.resolve(SessionAuth);
});

afterEach(async () => {
  vi.restoreAllMocks();
  await fx.close();
});

describe('SessionAuth', () => {
  it('accepts a live session token and answers the principal stored at upgrade', async () => {
    const token = await fx.session('player-7', { role: 'player' });
    expect(await auth.authenticate(ctx(token))).toMatchObject({ ok: true, principal: { id: 'player-7', roles: ['player'], via: 'session' } });
  });

  it('refuses a missing credential, a JWT, an unknown session token and garbage as unauthorized', async () => {
    const unknown = '3b241101-e2bb-4255-8caf-4136c566a962;session';
    for (const credential of [undefined, '', fx.jwt('player-7'), unknown, 'x;session']) {
      expect(await auth.authenticate(ctx(credential))).toMatchObject({ ok: false, code: 'unauthorized' });
    }
  });

  it('refuses a revoked session at its next check, also when kept on the connection', async () => {
    const memo = new Map();
    const token = await fx.session('player-7');
    expect((await auth.authenticate(ctx(token, memo))).ok).toBe(true);
    await fx.sessions.revoke(token);
    expect(await auth.authenticate(ctx(token, memo))).toMatchObject({ ok: false, code: 'unauthorized' });
  });

  it('answers the same result object for repeated messages on a connection, without a store read', async () => {
    const memo = new Map();
    const token = await fx.session('player-7');
    const first = await auth.authenticate(ctx(token, memo));
    const validate = vi.spyOn(fx.sessions, 'validate');
    expect(await auth.authenticate(ctx(token, memo))).toBe(first);
    expect(await auth.authenticate(ctx(token, memo))).toBe(first);
    expect(validate).not.toHaveBeenCalled();
  });

  it('answers unavailable when the session store is down', async () => {
    const down = await createShieldFixture(UNREACHABLE_REDIS, { waitForStore: false });
    try {
      const result = await down.container.resolve(SessionAuth).authenticate(ctx(`${randomUUID()};session`));
      expect(result).toEqual({ ok: false, code: 'unavailable', message: 'authentication is temporarily unavailable', retryAfterMs: 1000 });
    } finally {
      await down.close();
    }
  });

  it('answers at once, without a promise, while the near cache holds the session', async () => {
    const token = await fx.session('player-7');
    expect(await auth.authenticate(ctx(token))).toMatchObject({ ok: true, principal: { id: 'player-7' } });
    expect(auth.authenticate(ctx(token))).toMatchObject({ ok: true, principal: { id: 'player-7' } });
    await fx.sessions.revoke(token);
    expect(await auth.authenticate(ctx(token))).toMatchObject({ ok: false, code: 'unauthorized' });
  });
});
