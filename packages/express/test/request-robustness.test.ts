import 'reflect-metadata';
import { JwtTokenIssuer } from '@portcullis/core';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mountControllers } from '../src/index.js';
import { startHarness, type Answer, type Harness } from './support/http-harness.js';
import { ApiController, TestAuthController } from './support/test-controllers.js';

const PASSWORD = 'my-very-secret-passphrase';
let h: Harness;
const answers: Answer[] = [];
beforeAll(async () => {
  h = await startHarness({ controllers: [TestAuthController, ApiController] });
});
afterAll(() => h.close());

async function send(path: string, raw: string | undefined, headers: Record<string, string> = {}): Promise<Answer> {
  const answer = await h.request('POST', path, { raw, headers: { 'content-type': 'application/json', ...headers } });
  answers.push(answer);
  return answer;
}

describe('bad input is a precise 4xx, never a 500', () => {
  it.each([
    ['malformed JSON', `{"username":"ada","password":"${PASSWORD}"`],
    ['a JSON string instead of an object', `"${PASSWORD}"`],
    ['a JSON number', '42'],
    ['a JSON array', `["ada","${PASSWORD}"]`],
    ['JSON null', 'null'],
    ['an empty body', ''],
  ])('%s → 400 invalid_request', async (_name, raw) => {
    const answer = await send('/auth/login/unamepwd', raw);
    expect(answer.status).toBe(400);
    expect(answer.json).toEqual({ error: 'invalid_request', message: expect.any(String) });
  });

  it('a body over 16 KiB → 413 {error: "invalid_request"}', async () => {
    const answer = await send('/auth/signup', JSON.stringify({ email: 'big@example.com', username: 'big', password: 'x'.repeat(17 * 1024) }));
    expect(answer.status).toBe(413);
    expect(answer.json).toEqual({ error: 'invalid_request', message: expect.any(String) });
  });

  it('the 16 KiB limit counts the raw body\'s bytes: 16,384 are parsed, 16,385 → 413 invalid_request', async () => {
    /** A login body of exactly `bytes` bytes of UTF-8, padded with a field the route ignores, in `wide` (2-byte) characters if asked. */
    const bodyOf = (bytes: number, wide = false) => {
      const room = bytes - Buffer.byteLength(JSON.stringify({ username: 'boundary', password: 'wrong horse battery', pad: '' }));
      const pad = wide ? 'é'.repeat(Math.floor(room / 2)) + 'x'.repeat(room % 2) : 'x'.repeat(room);
      const raw = JSON.stringify({ username: 'boundary', password: 'wrong horse battery', pad });
      expect(Buffer.byteLength(raw)).toBe(bytes);
      return raw;
    };
    for (const wide of [false, true]) {
      const atLimit = await send('/auth/login/unamepwd', bodyOf(16 * 1024, wide));
      expect(atLimit.status).toBe(401);
      expect(atLimit.json).toEqual({ error: 'invalid_credentials', message: expect.any(String) });
      const overLimit = await send('/auth/login/unamepwd', bodyOf(16 * 1024 + 1, wide));
      expect(overLimit.status).toBe(413);
      expect(overLimit.json).toEqual({ error: 'invalid_request', message: expect.any(String) });
    }
    // 16,385 bytes are only about 8,200 characters when most of them take two bytes: the limit is not a character count.
    expect(bodyOf(16 * 1024 + 1, true).length).toBeLessThan(8_300);
  });

  it('a body without Content-Type: application/json → 400 invalid_request', async () => {
    const answer = await send('/auth/login/unamepwd', `username=ada&password=${PASSWORD}`, { 'content-type': 'application/x-www-form-urlencoded' });
    expect(answer.status).toBe(400);
    expect(answer.json.error).toBe('invalid_request');
  });

  it('a charset other than UTF-8 → 415 invalid_request', async () => {
    const answer = await send('/auth/login/unamepwd', `{"username":"ada","password":"${PASSWORD}"}`, { 'content-type': 'application/json; charset=latin1' });
    expect(answer.status).toBe(415);
    expect(answer.json.error).toBe('invalid_request');
  });

  it('fields of the wrong type → 400 invalid_request', async () => {
    for (const body of [{ username: ['ada'], password: PASSWORD }, { username: 'ada', password: { $ne: null } }, { username: { toString: 1 }, password: PASSWORD }]) {
      expect((await send('/auth/login/unamepwd', JSON.stringify(body))).status).toBe(400);
    }
    expect((await send('/auth/signup', JSON.stringify({ email: 1, username: 2, password: 3 }))).status).toBe(400);
  });

  it('fields under a __proto__ key are not read as the body\'s own fields, and pollute nothing', async () => {
    const answer = await send('/auth/login/unamepwd', `{"__proto__":{"username":"ada","password":"${PASSWORD}","polluted":true}}`);
    expect(answer.status).toBe(400);
    expect(answer.json.error).toBe('invalid_request');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('an unknown route → 404 {error: "not_found"}', async () => {
    const answer = await send('/auth/nope', '{}');
    expect(answer.status).toBe(404);
    expect(answer.json.error).toBe('not_found');
  });

  it('a handler that throws → 500 {error: "internal", message: "internal error"} without detail', async () => {
    const answer = await h.get('/api/throws');
    answers.push(answer);
    expect(answer.status).toBe(500);
    expect(answer.json).toEqual({ error: 'internal', message: 'internal error' });
  });

  it('a shielded handler that throws or rejects after its shield passed → the same 500, and the server keeps serving', async () => {
    const jwt = h.container.resolve(JwtTokenIssuer).issueLoginPair('player-1').accessToken;
    for (const path of ['/api/throws-shielded', '/api/rejects-shielded']) {
      const answer = await h.get(path, jwt);
      answers.push(answer);
      expect(answer.status).toBe(500);
      expect(answer.json).toEqual({ error: 'internal', message: 'internal error' });
      expect((await h.get(path)).status).toBe(401);
    }
    expect((await h.get('/api/me', jwt)).status).toBe(200);
  });

  it('no answer above held a stack trace, a file path or the password', () => {
    expect(answers.length).toBeGreaterThan(10);
    for (const answer of answers) {
      expect(answer.text).not.toMatch(/\bat .+:\d+:\d+|\.ts\b|\.js\b|node_modules|\/etc\/passwd/);
      expect(answer.text).not.toContain(PASSWORD);
      expect(answer.text).not.toContain('xxxxxxxxxx');
    }
  });
});

describe('mountControllers on an app of your own, without any error handler of yours', () => {
  it('still answers malformed JSON and thrown errors with {error, message}, never an HTML stack page', async () => {
    const own = await startHarness({
      build: (container) => {
        const app = express();
        mountControllers(app, container, [TestAuthController, ApiController]);
        return app;
      },
    });
    try {
      const malformed = await own.request('POST', '/auth/login/unamepwd', { raw: '{"username":', headers: { 'content-type': 'application/json' } });
      expect(malformed.status).toBe(400);
      expect(malformed.json).toMatchObject({ error: 'invalid_request' });
      const thrown = await own.get('/api/throws');
      expect(thrown.status).toBe(500);
      expect(thrown.json).toEqual({ error: 'internal', message: 'internal error' });
    } finally {
      await own.close();
    }
  });
});
