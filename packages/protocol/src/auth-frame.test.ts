import { describe, expect, it } from 'vitest';
import { readAuthFrame, readAuthReply } from './auth-frame.js';

describe('readAuthFrame', () => {
  it('reads a token or null, and nothing else', () => {
    expect(readAuthFrame({ type: 'auth', token: 'abc' })).toEqual({ type: 'auth', token: 'abc' });
    expect(readAuthFrame({ type: 'auth', token: null })).toEqual({ type: 'auth', token: null });
    for (const raw of [null, 'auth', [], { type: 'auth' }, { type: 'auth', token: 5 }, { type: 'hello', token: 'abc' }, { id: 1, portal: '/game', gate: 'ping' }]) {
      expect(readAuthFrame(raw)).toBeUndefined();
    }
  });
});

describe('readAuthReply', () => {
  it('reads an acceptance and a refusal', () => {
    expect(readAuthReply({ type: 'auth', ok: true })).toEqual({ type: 'auth', ok: true });
    expect(readAuthReply({ type: 'auth', ok: false, error: { code: 'unavailable', message: 'later' } })).toEqual({
      type: 'auth',
      ok: false,
      error: { code: 'unavailable', message: 'later' },
    });
  });

  it('reads any ok:false answer as a refusal, an unknown code as unauthorized', () => {
    expect(readAuthReply({ type: 'auth', ok: false })).toEqual({
      type: 'auth',
      ok: false,
      error: { code: 'unauthorized', message: 'a valid credential is required' },
    });
    expect(readAuthReply({ type: 'auth', ok: false, error: { code: 'teapot', message: 7 } })).toMatchObject({ ok: false, error: { code: 'unauthorized' } });
  });

  it('keeps the retry hint of a refusal, and only one that is a number of milliseconds', () => {
    expect(readAuthReply({ type: 'auth', ok: false, error: { code: 'unavailable', message: 'later', retryAfterMs: 1000 } })).toEqual({
      type: 'auth',
      ok: false,
      error: { code: 'unavailable', message: 'later', retryAfterMs: 1000 },
    });
    for (const retryAfterMs of [-1, '1000', null, Number.NaN]) {
      expect(readAuthReply({ type: 'auth', ok: false, error: { code: 'unavailable', message: 'later', retryAfterMs } })).toEqual({
        type: 'auth',
        ok: false,
        error: { code: 'unavailable', message: 'later' },
      });
    }
  });

  it('answers undefined for anything that is not an auth answer', () => {
    for (const raw of [undefined, null, 'auth', [], { type: 'auth', token: null }, { type: 'auth', ok: 'yes' }, { id: 1, ok: true, data: null }, { type: 'event', ok: true }]) {
      expect(readAuthReply(raw)).toBeUndefined();
    }
  });
});
