import { afterEach, describe, expect, it, vi } from 'vitest';
import { WS_CLOSE } from './close-codes.js';
import { WIRE_ERROR_MESSAGES, type WireErrorCode } from './error-codes.js';
import { encodeReply, errorReply, frameKind, type GateReply } from './frames.js';

describe('replies', () => {
  it('builds a failed reply with the fixed message of its code, or the one given', () => {
    expect(errorReply(null, 'bad_request')).toEqual({ id: null, ok: false, error: { code: 'bad_request', message: expect.stringContaining('"id"') } });
    expect(errorReply(3, 'unauthorized', 'the credential was revoked')).toEqual({ id: 3, ok: false, error: { code: 'unauthorized', message: 'the credential was revoked' } });
  });

  it('carries the retry hint of rate_limited as whole milliseconds', () => {
    expect(errorReply(4, 'rate_limited', undefined, 249.2)).toEqual({ id: 4, ok: false, error: { code: 'rate_limited', message: 'too many requests; retry later', retryAfterMs: 250 } });
    expect(errorReply(5, 'rate_limited')).toEqual({ id: 5, ok: false, error: { code: 'rate_limited', message: 'too many requests; retry later' } });
  });

  it('encodes a reply as JSON, and a result JSON cannot carry as internal for the same id', () => {
    expect(encodeReply({ id: 1, ok: true, data: 'pong' })).toBe('{"id":1,"ok":true,"data":"pong"}');
    expect(JSON.parse(encodeReply({ id: 2, ok: true, data: 10n }))).toEqual({ id: 2, ok: false, error: { code: 'internal', message: 'the gate failed' } });
  });
});

describe('encodeReply of a failed reply', () => {
  const codes = Object.keys(WIRE_ERROR_MESSAGES) as WireErrorCode[];

  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('writes the bytes JSON.stringify writes, for every code, id and hint the builders make', () => {
    for (const code of codes) {
      for (const id of [0, -0, 7, -3, 2 ** 53 - 1, 1.5, 1e21, 5e-7, null]) {
        for (const hint of [undefined, 0, 1, 999.2, 5000]) {
          const reply = errorReply(id, code, undefined, hint);
          expect(encodeReply(reply)).toBe(JSON.stringify(reply));
        }
      }
    }
  });

  it('writes a refusal the builders make without JSON.stringify, so shedding costs less than answering', () => {
    const stringify = vi.spyOn(JSON, 'stringify');
    encodeReply(errorReply(8, 'overloaded', undefined, 500));
    encodeReply(errorReply(null, 'bad_request'));
    expect(stringify).not.toHaveBeenCalled();
  });

  it('writes any other object with ok: false as JSON.stringify does, dropping, adding and reordering nothing', () => {
    const withHint = (hint: unknown) => ({ id: 2, ok: false, error: { code: 'overloaded', message: WIRE_ERROR_MESSAGES.overloaded, retryAfterMs: hint } });
    const inheritedHint = Object.assign(Object.create({ retryAfterMs: 9 }) as object, { code: 'overloaded', message: WIRE_ERROR_MESSAGES.overloaded, note: 'own' });
    const unusual: unknown[] = [
      errorReply(1, 'unauthorized', 'the credential was "revoked"\n'),
      withHint(1.5),
      withHint(-1),
      withHint(Number.NaN),
      withHint(Number.POSITIVE_INFINITY),
      withHint('500'),
      { id: 3, ok: false, error: { code: 'forbidden', message: WIRE_ERROR_MESSAGES.internal } },
      { id: 4, ok: false, error: { code: 'overloaded', message: WIRE_ERROR_MESSAGES.overloaded, detail: 'x' } },
      { id: 5, ok: false, error: { code: 'teapot', message: 'short and stout' } },
      { id: 6, ok: false, error: { message: WIRE_ERROR_MESSAGES.internal, code: 'internal' } },
      { ok: false, id: 7, error: { code: 'internal', message: WIRE_ERROR_MESSAGES.internal } },
      { id: 8, ok: false, error: inheritedHint },
      { id: 9, ok: false, error: { code: 'internal', message: WIRE_ERROR_MESSAGES.internal, toJSON: () => 'custom' } },
      { id: 10, ok: false, error: { code: 'internal', message: WIRE_ERROR_MESSAGES.internal }, extra: true },
      { id: 11, ok: 0, error: { code: 'internal', message: WIRE_ERROR_MESSAGES.internal } },
      { id: Number.NaN, ok: false, error: { code: 'internal', message: WIRE_ERROR_MESSAGES.internal } },
      { id: '12', ok: false, error: { code: 'internal', message: WIRE_ERROR_MESSAGES.internal } },
      { id: 13, ok: false, error: { code: '__proto__', message: WIRE_ERROR_MESSAGES.internal } },
    ];
    for (const reply of unusual) expect(encodeReply(reply as GateReply)).toBe(JSON.stringify(reply));
  });

  it('writes a push that has an id and ok: false but no error object (a frame the application chose) as it is', () => {
    for (const push of [{ type: 'trade', id: 7, ok: false, reason: 'declined' }, { id: 8, ok: false, error: null }, { id: 9, ok: false }]) {
      expect(encodeReply(push as unknown as GateReply)).toBe(JSON.stringify(push));
    }
  });
});

describe('frameKind', () => {
  it('tells replies, auth answers and pushes apart', () => {
    expect(frameKind({ id: 1, ok: true, data: null })).toBe('reply');
    expect(frameKind({ id: null, ok: false, error: {} })).toBe('reply');
    expect(frameKind({ id: '1', ok: true })).toBe('push');
    expect(frameKind({ type: 'auth', ok: false })).toBe('auth');
    expect(frameKind({ type: 'event', data: 'match found' })).toBe('push');
    expect(frameKind({ type: 'event', id: 1, ok: true })).toBe('push');
    expect(frameKind({ hello: 'world' })).toBe('push');
  });
});

describe('WS_CLOSE', () => {
  it('keeps the close codes clients rely on', () => {
    expect(WS_CLOSE).toMatchObject({ unauthorized: 4401, unavailable: 1013, goingAway: 1001, policy: 1008, tooLarge: 1009 });
    expect(Object.isFrozen(WS_CLOSE)).toBe(true);
  });
});
