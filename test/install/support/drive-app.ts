/**
 * Drives a consumer app the way a player's client would: signup and login over
 * HTTP, a JWT-shielded route, the upgrade, and an authenticated gate call over
 * WebSocket. Every step's failure names the step and what came back.
 */
import { expect } from 'vitest';
import WebSocket from 'ws';

async function post(base: string, path: string, body: unknown, bearer?: string): Promise<{ status: number; json: Record<string, unknown> }> {
  const response = await fetch(base + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(bearer ? { authorization: `Bearer ${bearer}` } : {}) },
    body: JSON.stringify(body),
  });
  return { status: response.status, json: (await response.json().catch(() => ({}))) as Record<string, unknown> };
}

/** Opens `/ws` with a bearer (or none), sends one request, answers the reply with its `id`. */
export function gateCall(base: string, bearer: string | undefined, gate: string): Promise<Record<string, unknown>> {
  const socket = new WebSocket(`${base.replace(/^http/, 'ws')}/ws`, { headers: bearer ? { authorization: `Bearer ${bearer}` } : {} });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => finish(new Error(`no reply to gate ${gate} within 5 s`)), 5000);
    const finish = (outcome: Error | Record<string, unknown>) => {
      clearTimeout(timer);
      socket.close();
      if (outcome instanceof Error) reject(outcome);
      else resolve(outcome);
    };
    socket.once('open', () => {
      if (!bearer) socket.send(JSON.stringify({ type: 'auth', token: null }));
      socket.send(JSON.stringify({ id: 1, portal: '/game', gate }));
    });
    socket.on('message', (raw) => {
      const frame = JSON.parse(String(raw)) as Record<string, unknown>;
      if (frame.id === 1) finish(frame);
    });
    socket.once('error', (error) => finish(new Error(`WebSocket to ${base}/ws failed: ${error.message}`)));
    socket.once('close', (code) => finish(new Error(`WebSocket closed (${code}) before the reply to gate ${gate}`)));
  });
}

/** Signs a fresh player up, logs in, reads `/api/me`, upgrades and calls `whoami` over WebSocket. */
export async function driveApp(base: string): Promise<void> {
  const username = `player${process.pid}${Date.now() % 100000}`;
  const password = 'correct horse battery';
  const signup = await post(base, '/auth/signup', { email: `${username}@example.com`, username, password });
  expect(signup, 'POST /auth/signup').toMatchObject({ status: 201, json: { accessToken: expect.any(String) } });
  const login = await post(base, '/auth/login/unamepwd', { username, password });
  expect(login, 'POST /auth/login/unamepwd').toMatchObject({ status: 200, json: { accessToken: expect.any(String), refreshToken: expect.any(String) } });
  const jwt = login.json.accessToken as string;

  const me = await fetch(`${base}/api/me`, { headers: { authorization: `Bearer ${jwt}` } });
  const meBody = (await me.json()) as { greeting?: string };
  expect({ status: me.status, body: meBody }, 'GET /api/me with the JWT').toMatchObject({ status: 200, body: { greeting: expect.stringMatching(/^hello \S+$/) } });
  const anonymousMe = await fetch(`${base}/api/me`);
  expect(anonymousMe.status, 'GET /api/me without a bearer').toBe(401);

  const upgrade = await post(base, '/auth/upgrade', { token: jwt }, jwt);
  expect(upgrade, 'POST /auth/upgrade').toMatchObject({ status: 200, json: { accessToken: expect.stringMatching(/;session$/) } });

  const reply = await gateCall(base, upgrade.json.accessToken as string, 'whoami');
  expect(reply, 'gate whoami with the session token').toEqual({ id: 1, ok: true, data: { id: meBody.greeting!.slice('hello '.length) } });
  const anonymous = await gateCall(base, undefined, 'whoami');
  expect(anonymous, 'gate whoami without a credential').toMatchObject({ id: 1, ok: false, error: { code: 'unauthorized' } });
}
