import 'reflect-metadata';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { UpgradeContext } from '../src/index.js';
import { jwtPayload, signupAndLogin, startHarness, type Harness } from './support/http-harness.js';
import { ApiController, TestAuthController, failNextSuccess, hookCalls, reservedClaimNextLogin } from './support/test-controllers.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ controllers: [TestAuthController, ApiController] });
});
afterAll(() => h.close());
beforeEach(() => {
  hookCalls.length = 0;
});

const upgrade = (jwt: string, bearer = jwt) => h.request('POST', '/auth/upgrade', { token: bearer, body: { token: jwt } });

describe('JwtAuthController hooks', () => {
  it('calls getClaimsForLogin with the account model and the request, and puts its claims in the JWTs', async () => {
    const login = await signupAndLogin(h, 'sara');
    expect(hookCalls.map((c) => c.hook)).toEqual(['getClaimsForLogin']);
    const [account, request] = hookCalls[0]!.args as [Record<string, unknown>, { path: string }];
    expect(Object.keys(account).sort()).toEqual(['email', 'passwordHash', 'storageId', 'username']);
    expect(account).toMatchObject({ username: 'sara', email: 'sara@example.com', passwordHash: expect.stringMatching(/^\$2/) });
    expect(request.path).toBe('/auth/signup');
    expect(jwtPayload(login.accessToken)).toMatchObject({ sub: account.storageId, name: 'sara', acc: account.storageId });
    expect(jwtPayload(login.refreshToken)).toMatchObject({ sub: account.storageId, name: 'sara' });
    await h.post('/auth/login/unamepwd', { username: 'sara', password: 'correct horse battery' });
    expect((hookCalls[1]!.args[1] as { path: string }).path).toBe('/auth/login/unamepwd');
  });

  it('answers 500 internal without detail when getClaimsForLogin returns a reserved claim (a server bug, not bad input)', async () => {
    await signupAndLogin(h, 'rita');
    reservedClaimNextLogin.value = true;
    const answer = await h.post('/auth/login/unamepwd', { username: 'rita', password: 'correct horse battery' });
    expect(answer.status).toBe(500);
    expect(answer.json).toEqual({ error: 'internal', message: 'internal error' });
    expect((await h.post('/auth/login/unamepwd', { username: 'rita', password: 'correct horse battery' })).status).toBe(200);
  });

  it('runs onUpgrade then onUpgradeSuccess with the context, the client id and the result; a replaced context reaches the success hook', async () => {
    const login = await signupAndLogin(h, 'tom');
    hookCalls.length = 0;
    const answer = await upgrade(login.accessToken);
    expect(answer.status).toBe(200);
    expect(hookCalls.map((c) => c.hook)).toEqual(['onUpgrade', 'onUpgradeSuccess']);
    const [ctx, clientId] = hookCalls[0]!.args as [UpgradeContext, string];
    expect(ctx.token).toBe(login.accessToken);
    expect(ctx.remoteAddress).toBe('127.0.0.1');
    expect(ctx.principal).toMatchObject({ name: 'tom', via: 'jwt' });
    expect(ctx.request.path).toBe('/auth/upgrade');
    expect(clientId).toMatch(/^[0-9a-f-]{36}$/);
    const [successCtx, successClientId, result] = hookCalls[1]!.args as [UpgradeContext, string, { accessToken: string; principal: { id: string } }];
    expect(successCtx.items.get('from')).toBe('onUpgrade');
    expect(successClientId).toBe(clientId);
    expect(result.accessToken).toBe(answer.json.accessToken);
    expect(result.principal.id).toBe(ctx.principal!.id);
  });

  it('runs onUpgradeFailed (and not onUpgrade) when the JWT is refused or the header differs', async () => {
    const login = await signupAndLogin(h, 'uma');
    hookCalls.length = 0;
    expect((await upgrade(login.accessToken, 'someone-else')).status).toBe(401);
    expect((await upgrade('not.a.jwt')).status).toBe(401);
    expect(hookCalls.map((c) => c.hook)).toEqual(['onUpgradeFailed', 'onUpgradeFailed']);
    const [ctx, clientId] = hookCalls[1]!.args as [UpgradeContext, string];
    expect(ctx.token).toBe('not.a.jwt');
    expect(ctx.principal).toBeUndefined();
    expect(typeof clientId).toBe('string');
  });

  it('runs onUpgradeFailed for a second upgrade of the same JWT', async () => {
    const login = await signupAndLogin(h, 'vera');
    expect((await upgrade(login.accessToken)).status).toBe(200);
    hookCalls.length = 0;
    expect((await upgrade(login.accessToken)).status).toBe(401);
    expect(hookCalls.map((c) => c.hook)).toEqual(['onUpgradeFailed']);
  });

  it('undoes the upgrade when onUpgradeSuccess throws: 500 without detail, and the new session does not work', async () => {
    const login = await signupAndLogin(h, 'walt');
    failNextSuccess.value = true;
    const answer = await upgrade(login.accessToken);
    expect(answer.status).toBe(500);
    expect(answer.json).toEqual({ error: 'internal', message: 'internal error' });
    const result = hookCalls.at(-1)!.args[2] as { accessToken: string };
    expect((await h.get('/api/session', result.accessToken)).status).toBe(401);
  });
});
