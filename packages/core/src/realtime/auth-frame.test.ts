import 'reflect-metadata';
import { describe, expect, it } from 'vitest';
import { PortcullisError } from '../errors/portcullis-error.js';
import { authReply } from './auth-frame.js';
import { refreshInBand } from './in-band-credentials.js';

describe('authReply', () => {
  it('answers ok, the refusal of an outcome, or a wire code', () => {
    expect(authReply({ ok: true })).toEqual({ type: 'auth', ok: true });
    expect(authReply({ ok: false, code: 'unauthorized', message: 'nope' })).toEqual({ type: 'auth', ok: false, error: { code: 'unauthorized', message: 'nope' } });
    expect(authReply('bad_request')).toEqual({ type: 'auth', ok: false, error: { code: 'bad_request', message: expect.any(String) } });
  });

  it('says when to try again after unavailable, as a gate reply does', () => {
    expect(authReply('unavailable')).toEqual({ type: 'auth', ok: false, error: { code: 'unavailable', message: expect.any(String), retryAfterMs: 1000 } });
    expect(authReply({ ok: false, code: 'unavailable', message: 'store down' })).toEqual({ type: 'auth', ok: false, error: { code: 'unavailable', message: 'store down', retryAfterMs: 1000 } });
  });

  it('carries the retry hint the refusal gives, for any code that has one', () => {
    expect(authReply({ ok: false, code: 'unavailable', message: 'store down', retryAfterMs: 2500 })).toEqual({ type: 'auth', ok: false, error: { code: 'unavailable', message: 'store down', retryAfterMs: 2500 } });
    expect(authReply({ ok: false, code: 'rate_limited', message: 'slow down', retryAfterMs: 249.2 })).toEqual({ type: 'auth', ok: false, error: { code: 'rate_limited', message: 'slow down', retryAfterMs: 250 } });
  });
});

describe('refreshInBand', () => {
  it('answers a refresh the store could not make unavailable, retry after a second', async () => {
    const down = { refresh: () => Promise.reject(new PortcullisError('unavailable', 'down')) };
    expect((await refreshInBand(down, 'x;session', 'p')).reply).toEqual({ type: 'refresh', ok: false, error: { code: 'unavailable', message: expect.any(String), retryAfterMs: 1000 } });
  });

  it('says the retry hint of the error it answers, and none for an error it answers internal', async () => {
    const busy = { refresh: () => Promise.reject(new PortcullisError('unavailable', 'busy', { retryAfterSeconds: 3 })) };
    expect((await refreshInBand(busy, 'x;session', 'p')).reply).toEqual({ type: 'refresh', ok: false, error: { code: 'unavailable', message: expect.any(String), retryAfterMs: 3000 } });
    const locked = { refresh: () => Promise.reject(new PortcullisError('locked_out', 'locked', { retryAfterSeconds: 60 })) };
    expect((await refreshInBand(locked, 'x;session', 'p')).reply).toEqual({ type: 'refresh', ok: false, error: { code: 'internal', message: expect.any(String) } });
  });
});
