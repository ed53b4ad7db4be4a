import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuthApi, PortcullisClient, PortcullisClientError } from '../src/index.js';
import { newAccount, startGameServer, type RunningGameServer } from './support/game-server-harness.js';

let server: RunningGameServer;
beforeAll(async () => { server = await startGameServer(); });
afterAll(async () => { await server?.stop(); });

const client = () => new PortcullisClient({ baseUrl: server.baseUrl });

describe('PortcullisClient over HTTP, against the example server', () => {
  it('signs up, keeps the login pair, and refuses a taken username with a typed 409', async () => {
    const account = newAccount();
    const alice = client();
    const tokens = await alice.signup(account);
    expect(alice.tokens.login).toEqual(tokens);
    const again = client().signup({ ...account, email: `other-${account.email}` });
    await expect(again).rejects.toBeInstanceOf(PortcullisClientError);
    await expect(again).rejects.toMatchObject({ code: 'conflict', status: 409 });
  });

  it('logs in with username and with email; a wrong password is invalid_credentials (401)', async () => {
    const account = newAccount();
    await client().signup(account);
    const byName = client();
    const byEmail = client();
    await byName.loginWithUsername(account.username, account.password);
    await byEmail.loginWithEmail(account.email, account.password);
    expect(byName.tokens.login?.accessToken).toMatch(/^ey/);
    expect(byEmail.tokens.login?.accessToken).toMatch(/^ey/);
    await expect(client().loginWithUsername(account.username, 'wrong-password')).rejects.toMatchObject({ code: 'invalid_credentials', status: 401 });
  });

  it('upgrades to a session pair with Date expirations; the upgraded JWT is invalid from then on', async () => {
    const alice = client();
    await alice.signup(newAccount());
    const jwt = alice.tokens.login?.accessToken as string;
    const session = await alice.upgrade();
    expect(session.accessToken).toMatch(/^[0-9a-f-]{36};session$/);
    expect(session.accessExpiration).toBeInstanceOf(Date);
    expect(session.refreshExpiration).toBeInstanceOf(Date);
    expect(session.refreshExpiration.getTime()).toBeGreaterThan(session.accessExpiration.getTime());
    expect(alice.tokens.session).toEqual(session);
    expect(alice.tokens.login?.accessToken).toBeUndefined();
    await expect(new AuthApi(server.baseUrl).upgrade(jwt)).rejects.toMatchObject({ code: 'invalid_token', status: 401 });
  });

  it('refreshes the session pair and the JWT pair; each presented refresh token is used up', async () => {
    const alice = client();
    await alice.signup(newAccount());
    const firstLogin = alice.tokens.login?.refreshToken as string;
    const login = await alice.refresh();
    expect(login.kind).toBe('login');
    await alice.upgrade();
    const firstSession = alice.tokens.session?.refreshToken as string;
    const renewed = await alice.refresh();
    expect(renewed.kind).toBe('session');
    expect(renewed.kind === 'session' && renewed.tokens.accessExpiration).toBeInstanceOf(Date);
    const api = new AuthApi(server.baseUrl);
    await expect(api.refresh(firstSession)).rejects.toMatchObject({ code: 'invalid_token' });
    await expect(api.refresh(firstLogin)).rejects.toMatchObject({ code: 'invalid_token' });
  });

  it('authorizedFetch sends the JWT, and after an upgrade refreshes it by itself', async () => {
    const alice = client();
    await alice.signup(newAccount());
    const before = server.hits.get('/auth/refresh') ?? 0;
    const me = await (await alice.authorizedFetch('/api/me')).json() as { id: string };
    expect(me.id).toMatch(/[0-9a-f-]{36}/);
    await alice.upgrade();
    const again = await alice.authorizedFetch('/api/me');
    expect(again.status).toBe(200);
    expect(await again.json()).toMatchObject({ id: me.id });
    expect((server.hits.get('/auth/refresh') ?? 0) - before).toBe(1);
  });

  it('logout revokes the session and the whole login on the server and forgets every token', async () => {
    const alice = client();
    await alice.signup(newAccount());
    const session = await alice.upgrade();
    let jwtRefresh = '';
    alice.onTokens((held) => { if (held.login) jwtRefresh = held.login.refreshToken; });
    await alice.logout();
    expect(jwtRefresh).not.toBe('');
    expect(alice.tokens).toEqual({});
    const api = new AuthApi(server.baseUrl);
    await expect(api.refresh(session.refreshToken)).rejects.toMatchObject({ code: 'invalid_token' });
    await expect(api.refresh(jwtRefresh)).rejects.toMatchObject({ code: 'invalid_token' });
    await expect(alice.upgrade()).rejects.toMatchObject({ code: 'not_authenticated' });
  });

  it('never puts a token in a URL', async () => {
    const urls: string[] = [];
    const spy = new PortcullisClient({ baseUrl: server.baseUrl, fetch: (input, init) => { urls.push(input); return fetch(input, init); } });
    await spy.signup(newAccount());
    await spy.refresh();
    await spy.upgrade();
    await spy.refresh();
    await spy.authorizedFetch('/api/me');
    await spy.logout();
    const tokens = urls.filter((u) => /ey[\w-]+\.|;session/.test(decodeURIComponent(u)));
    expect(urls.length).toBeGreaterThanOrEqual(6);
    expect(tokens).toEqual([]);
  });

  it('reports an unreachable server as network_error', async () => {
    const gone = new PortcullisClient({ baseUrl: 'http://127.0.0.1:9' });
    await expect(gone.loginWithUsername('a', 'b')).rejects.toMatchObject({ code: 'network_error', status: undefined });
  });
});
