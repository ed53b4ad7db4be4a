import 'reflect-metadata';
import { describe, expect, it } from 'vitest';
import { authReply } from './auth-frame.js';

describe('authReply', () => {
  it('answers ok, the refusal of an outcome, or a wire code', () => {
    expect(authReply({ ok: true })).toEqual({ type: 'auth', ok: true });
    expect(authReply({ ok: false, code: 'unauthorized', message: 'nope' })).toEqual({ type: 'auth', ok: false, error: { code: 'unauthorized', message: 'nope' } });
    expect(authReply('bad_request')).toEqual({ type: 'auth', ok: false, error: { code: 'bad_request', message: expect.any(String) } });
  });
});
