import 'reflect-metadata';
import { describe, expect, it } from 'vitest';
import { credentialKind } from '../shield/credential-kind.js';
import { authReply } from './auth-frame.js';

describe('authReply', () => {
  it('answers ok, the refusal of an outcome, or a wire code', () => {
    expect(authReply({ ok: true, kind: 'anonymous', principal: undefined })).toEqual({ type: 'auth', ok: true });
    expect(authReply({ ok: false, code: 'unauthorized', message: 'nope' })).toEqual({ type: 'auth', ok: false, error: { code: 'unauthorized', message: 'nope' } });
    expect(authReply('bad_request')).toEqual({ type: 'auth', ok: false, error: { code: 'bad_request', message: expect.any(String) } });
  });
});

describe('credentialKind', () => {
  it('tells session tokens from JWTs by shape, and refuses everything else', () => {
    expect(credentialKind('3b241101-e2bb-4255-8caf-4136c566a962;session')).toBe('session');
    expect(credentialKind('eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJwIn0.c2ln')).toBe('jwt');
    for (const other of ['eyJhbGciOiJub25lIn0.eyJzdWIiOiJwIn0.', 'Bearer x', '', 'a.b.c.d', 42, null, `${'a'.repeat(9000)}.b.c`]) {
      expect(credentialKind(other)).toBeUndefined();
    }
  });
});
