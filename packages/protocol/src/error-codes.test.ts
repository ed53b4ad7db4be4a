import { describe, expect, it } from 'vitest';
import { ERROR_CODES, isErrorCode, isWireErrorCode, WIRE_ERROR_MESSAGES } from './error-codes.js';

describe('the error codes', () => {
  it('are one list without duplicates, and the real-time codes are part of it', () => {
    expect(new Set(ERROR_CODES).size).toBe(ERROR_CODES.length);
    expect(Object.keys(WIRE_ERROR_MESSAGES).sort()).toEqual(['bad_request', 'forbidden', 'internal', 'not_found', 'overloaded', 'rate_limited', 'unauthorized', 'unavailable']);
    for (const code of Object.keys(WIRE_ERROR_MESSAGES)) expect(ERROR_CODES).toContain(code);
    expect(Object.isFrozen(ERROR_CODES) && Object.isFrozen(WIRE_ERROR_MESSAGES)).toBe(true);
  });

  it('tell known codes from anything else', () => {
    expect(ERROR_CODES.every(isErrorCode)).toBe(true);
    for (const other of ['config_invalid', 'toString', '', 'UNAUTHORIZED', 401, undefined, null]) expect(isErrorCode(other)).toBe(false);
    expect(['unauthorized', 'unavailable', 'rate_limited', 'internal'].every(isWireErrorCode)).toBe(true);
    for (const other of ['conflict', 'locked_out', 'toString', 'hasOwnProperty', 42]) expect(isWireErrorCode(other)).toBe(false);
  });

  it('have a message for every real-time code', () => {
    for (const message of Object.values(WIRE_ERROR_MESSAGES)) expect(message.length).toBeGreaterThan(0);
    expect(WIRE_ERROR_MESSAGES.unavailable).toBe('authentication is temporarily unavailable');
  });
});
