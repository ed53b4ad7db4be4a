/**
 * The onSignup hook over real HTTP: it sees the valid, trimmed email and username,
 * refuses with 400 invalid_request and its own message, creates nothing when it
 * refuses, and a malformed answer is a server error, not a signup.
 */
import 'reflect-metadata';
import { ACCOUNT_STORE, type AccountStore } from '@portcullis/core';
import type { Request } from 'express';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Controller, JwtAuthController, type SignupAttempt, type SignupRefusal } from '../src/index.js';
import { startHarness, type Harness } from './support/http-harness.js';

const seen: Array<{ attempt: SignupAttempt; userAgent: string | undefined }> = [];
let answer: (attempt: SignupAttempt) => SignupRefusal | void | Promise<SignupRefusal | void> = () => undefined;

@Controller('/auth')
class ScreenedAuthController extends JwtAuthController {
  override onSignup(attempt: SignupAttempt, request: Request) {
    seen.push({ attempt, userAgent: request.get('user-agent') });
    return answer(attempt);
  }
}

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ controllers: [ScreenedAuthController] });
});
afterAll(() => h.close());
beforeEach(() => {
  seen.length = 0;
  answer = () => undefined;
});

const accounts = () => h.container.resolve<AccountStore>(ACCOUNT_STORE);
const signup = (username: string, extra: Record<string, unknown> = {}) =>
  h.post('/auth/signup', { email: ` ${username}@example.com `, username: ` ${username} `, password: 'correct horse battery', ...extra });

describe('onSignup', () => {
  it('sees the trimmed email and username and the request, and lets the signup through when it answers nothing', async () => {
    const created = await signup('ada');
    expect(created.status).toBe(201);
    expect(seen).toEqual([{ attempt: { email: 'ada@example.com', username: 'ada' }, userAgent: expect.any(String) }]);
    expect(await accounts().findByUsername('ada')).toMatchObject({ username: 'ada' });
  });

  it('refuses with 400 invalid_request and the message it chose, and creates no account', async () => {
    answer = (attempt) => (attempt.username.startsWith('admin') ? { refuse: 'that username is reserved' } : undefined);
    const refused = await signup('admin1');
    expect(refused.status).toBe(400);
    expect(refused.json).toEqual({ error: 'invalid_request', message: 'that username is reserved' });
    expect(await accounts().findByUsername('admin1')).toBeUndefined();
    expect((await signup('grace')).status).toBe(201);
  });

  it('may answer asynchronously', async () => {
    answer = async () => {
      await new Promise((resolve) => setTimeout(resolve, 5));
      return { refuse: 'signups are closed for maintenance' };
    };
    const refused = await signup('linus');
    expect(refused.json).toEqual({ error: 'invalid_request', message: 'signups are closed for maintenance' });
  });

  it('is not asked about an invalid email or username: those are refused first, as before', async () => {
    const badEmail = await h.post('/auth/signup', { email: 'not-an-email', username: 'barbara', password: 'correct horse battery' });
    expect(badEmail.json).toEqual({ error: 'invalid_request', message: 'email must be an email address' });
    const badName = await h.post('/auth/signup', { email: 'b@example.com', username: 'b@', password: 'correct horse battery' });
    expect(badName.status).toBe(400);
    expect(seen).toEqual([]);
  });

  it('answers 500 internal, creating nothing, when the hook answers something that is not a refusal', async () => {
    answer = () => ({ refuse: '' });
    const empty = await signup('alan');
    expect(empty.status).toBe(500);
    expect(empty.json).toEqual({ error: 'internal', message: 'internal error' });
    answer = () => 'no' as unknown as SignupRefusal;
    expect((await signup('alan')).status).toBe(500);
    expect(await accounts().findByUsername('alan')).toBeUndefined();
  });
});
