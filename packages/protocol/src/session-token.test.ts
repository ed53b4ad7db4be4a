import { describe, expect, it } from 'vitest';
import { isSessionToken, SESSION_TOKEN_LENGTH, SESSION_TOKEN_SUFFIX } from './session-token.js';

describe('the session token shape', () => {
  it('accepts only a lower-case UUID v4 with the ;session suffix', () => {
    expect(SESSION_TOKEN_LENGTH).toBe(44);
    expect(isSessionToken(`3b241101-e2bb-4255-8caf-4136c566a962${SESSION_TOKEN_SUFFIX}`)).toBe(true);
    for (const other of [
      '3B241101-E2BB-4255-8CAF-4136C566A962;session',
      '3b241101-e2bb-1255-8caf-4136c566a962;session',
      '3b241101-e2bb-4255-7caf-4136c566a962;session',
      '3b241101-e2bb-4255-8caf-4136c566a962;sessions',
      '../../etc/passwd/aaaaaaaaaaaaaaaaaaaaaaaaa;session',
      '3b241101-e2bb-4255-8caf-4136c566a962',
      42,
      null,
    ]) {
      expect(isSessionToken(other)).toBe(false);
    }
  });
});
