import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import bcrypt from 'bcrypt';
import { parseAdminUsers } from '../src/admin-users.js';
import { startExampleServer, type Caller, type ExampleServer } from './support/example-server.js';

let example: ExampleServer;
let base: string;
let call: Caller;

beforeAll(async () => {
  example = await startExampleServer({ adminUsers: parseAdminUsers(' Root ,ops'), adminPasswordHash: await bcrypt.hash('operator password', 4) });
  ({ base, call } = example);
});
afterAll(() => example.close());

describe('example game server over HTTP', () => {
  it('listens on 127.0.0.1 and answers unknown routes with JSON 404', async () => {
    expect(base).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(await call('GET', '/nope')).toMatchObject({ status: 404, json: { error: 'not_found' } });
  });

  it('walks signup → login → /api/me → /api/token → upgrade → /api/admin as a player (403) and an admin (200)', async () => {
    const signup = await call('POST', '/auth/signup', { email: 'pixel@example.com', username: 'pixel', password: 'correct horse battery' });
    expect(signup.status).toBe(201);

    const login = await call('POST', '/auth/login/unamepwd', { username: 'pixel', password: 'correct horse battery' });
    expect(login.status).toBe(200);
    const { accessToken, refreshToken } = login.json;
    expect(refreshToken).toEqual(expect.any(String));

    const me = await call('GET', '/api/me', undefined, accessToken);
    expect(me).toEqual({ status: 200, json: { id: expect.stringMatching(/^[0-9a-f-]{36}$/), name: 'pixel', ip: '127.0.0.1' } });

    const short = await call('POST', '/api/token', undefined, accessToken);
    expect(short.status).toBe(200);
    expect(short.json).toEqual({ accessToken: expect.any(String), expiresIn: 300 });
    expect((await call('GET', '/api/me', undefined, short.json.accessToken)).json.id).toBe(me.json.id);
    const again = await fetch(`${base}/api/token`, { method: 'POST', headers: { authorization: `Bearer ${accessToken}` } });
    expect(again.headers.get('cache-control')).toBe('no-store');

    const upgrade = await call('POST', '/auth/upgrade', { token: accessToken }, accessToken);
    expect(upgrade.status).toBe(200);
    expect(upgrade.json.accessToken).toMatch(/;session$/);
    expect((await call('GET', '/api/me', undefined, accessToken)).status).toBe(401);

    expect((await call('GET', '/api/admin', undefined, signup.json.accessToken)).status).toBe(403);

    expect((await call('POST', '/auth/signup', { email: 'root@example.com', username: 'root', password: 'correct horse battery' })).status).toBe(409);
    const root = await call('POST', '/auth/login/unamepwd', { username: 'root', password: 'operator password' });
    expect(root.status).toBe(200);
    const admin = await call('GET', '/api/admin', undefined, root.json.accessToken);
    expect(admin.status).toBe(200);
    expect(admin.json).toMatchObject({ admin: 'root' });
  });
});
