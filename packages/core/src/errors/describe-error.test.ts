import { describe, expect, it } from 'vitest';
import { describeError } from './describe-error.js';
import { PortcullisError, TokenError } from './portcullis-error.js';

describe('describeError', () => {
  it('gives the class name and the code, never the message', () => {
    const secret = 'password hunter2 and token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJwIn0.c2ln';
    const described = [
      describeError(new PortcullisError('unavailable', secret)),
      describeError(new TokenError('expired', secret)),
      describeError(Object.assign(new Error(secret), { code: 'ECONNRESET' })),
      describeError(new TypeError(secret)),
    ];
    expect(described).toEqual([
      { error: 'PortcullisError', code: 'unavailable' },
      { error: 'TokenError', code: 'invalid_token' },
      { error: 'Error', code: 'ECONNRESET' },
      { error: 'TypeError' },
    ]);
    expect(JSON.stringify(described)).not.toContain('hunter2');
  });

  it('describes what is not an Error by its type, and leaves out a name or code that is not an identifier', () => {
    expect(describeError('password hunter2')).toEqual({ error: 'string' });
    expect(describeError(undefined)).toEqual({ error: 'undefined' });
    expect(describeError(null)).toEqual({ error: 'object' });
    expect(describeError({ name: 'token abc.def', code: 'the password is hunter2' })).toEqual({ error: 'Object' });
    expect(describeError(Object.create(null))).toEqual({ error: 'object' });
  });
});
