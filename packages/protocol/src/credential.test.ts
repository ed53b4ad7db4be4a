import { describe, expect, it } from 'vitest';
import { credentialKind, isJwtShape, MAX_TOKEN_LENGTH } from './credential.js';

describe('credentialKind', () => {
  it('tells session tokens from JWTs by shape, and refuses everything else', () => {
    expect(credentialKind('3b241101-e2bb-4255-8caf-4136c566a962;session')).toBe('session');
    expect(credentialKind('eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJwIn0.c2ln')).toBe('jwt');
    for (const other of ['eyJhbGciOiJub25lIn0.eyJzdWIiOiJwIn0.', 'Bearer x', '', 'a.b.c.d', 42, null, `${'a'.repeat(9000)}.b.c`]) {
      expect(credentialKind(other)).toBeUndefined();
    }
  });
});

describe('isJwtShape', () => {
  it('accepts three base64url segments up to the length limit, nothing unsigned or longer', () => {
    expect(isJwtShape('eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJwIn0.c2ln')).toBe(true);
    expect(isJwtShape('eyJhbGciOiJub25lIn0.eyJzdWIiOiJwIn0.')).toBe(false);
    expect(isJwtShape(`${'a'.repeat(MAX_TOKEN_LENGTH)}.b.c`)).toBe(false);
  });
});
