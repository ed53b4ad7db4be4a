import { describe, expect, it } from 'vitest';
import { frameKind } from './frames.js';
import { readSessionsResponse } from './http-bodies.js';
import { readRefreshFrame, readRefreshReply } from './refresh-frame.js';

const pair = { accessToken: 'a;session', refreshToken: 'r;session', accessExpiration: '2030-01-01T00:00:00.000Z', refreshExpiration: '2030-01-08T00:00:00.000Z' };

describe('refresh frames', () => {
  it('reads a refresh frame; a token that is not a string reads as empty, which the server refuses', () => {
    expect(readRefreshFrame({ type: 'refresh', token: 'r;session' })).toEqual({ type: 'refresh', token: 'r;session' });
    expect(readRefreshFrame({ type: 'refresh', token: 7 })).toEqual({ type: 'refresh', token: '' });
    expect(readRefreshFrame({ type: 'auth', token: 'x' })).toBeUndefined();
    expect(readRefreshFrame([{ type: 'refresh' }])).toBeUndefined();
  });

  it('reads an answer: the new pair, or a refusal with a known code', () => {
    expect(readRefreshReply({ type: 'refresh', ok: true, ...pair })).toMatchObject({ ok: true, ...pair });
    expect(readRefreshReply({ type: 'refresh', ok: true, accessToken: 'a;session' })).toBeUndefined();
    expect(readRefreshReply({ type: 'refresh', ok: false, error: { code: 'forbidden', message: 'no' } })).toEqual({ type: 'refresh', ok: false, error: { code: 'forbidden', message: 'no' } });
    expect(readRefreshReply({ type: 'refresh', ok: false, error: { code: 'weird' } })).toMatchObject({ ok: false, error: { code: 'unauthorized' } });
    expect(frameKind({ type: 'refresh', ok: true, ...pair })).toBe('refresh');
  });
});

describe('session inventory body', () => {
  const entry = { id: 'abc', createdAt: '2030-01-01T00:00:00.000Z', refreshedAt: '2030-01-02T00:00:00.000Z', ip: null, userAgent: 'ua', upgraded: false, current: true };

  it('reads every entry, null address and agent included', () => {
    expect(readSessionsResponse({ sessions: [entry] })).toEqual({ sessions: [entry] });
  });

  it('refuses a body that is not a session list', () => {
    expect(readSessionsResponse({ sessions: [{ ...entry, current: 'yes' }] })).toBeUndefined();
    expect(readSessionsResponse({ sessions: [{ ...entry, createdAt: 'soon' }] })).toBeUndefined();
    expect(readSessionsResponse({})).toBeUndefined();
  });
});
