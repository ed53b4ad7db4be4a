/**
 * What a custom shield sees over HTTP: the transport-neutral context with its
 * credential, client id, remote address and route, also when the shield copies
 * it ({...ctx}) to hand a built-in shield a changed credential.
 */
import 'reflect-metadata';
import { JwtAuth, JwtTokenIssuer, Shield, type AuthContext, type ShieldAuth, type ShieldResult } from '@portcullis/core';
import type { Request } from 'express';
import { injectable } from 'tsyringe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Controller, Get, principalId } from '../src/index.js';
import { startHarness, type Harness } from './support/http-harness.js';

/** Every context a shield of this file was given, as the shield read it. */
const seen: Array<Omit<AuthContext, 'memo'>> = [];

const record = (ctx: AuthContext) => seen.push({ transport: ctx.transport, credential: ctx.credential, clientId: ctx.clientId, remoteAddress: ctx.remoteAddress, route: ctx.route });

/** Lets through `open-sesame`, recording the context it was given. */
class RecordingAuth implements ShieldAuth {
  authenticate(ctx: AuthContext): ShieldResult {
    record(ctx);
    return ctx.credential === 'open-sesame'
      ? { ok: true, principal: { id: 'recorded', name: undefined, roles: [], claims: {}, via: 'custom' } }
      : { ok: false, code: 'unauthorized' };
  }
}

/** Takes `jwt:<token>` and hands a copy of the context, with the bare token, to `JwtAuth`. */
@injectable()
class PrefixedJwtAuth implements ShieldAuth {
  constructor(private readonly jwt: JwtAuth) {}

  async authenticate(ctx: AuthContext): Promise<ShieldResult> {
    const credential = ctx.credential?.startsWith('jwt:') ? ctx.credential.slice(4) : undefined;
    const copy = { ...ctx, credential };
    record(copy);
    return await this.jwt.authenticate(copy);
  }
}

@Controller('/ctx')
class ContextController {
  @Shield(RecordingAuth)
  @Get('/recorded')
  recorded(req: Request) {
    return { id: principalId(req) };
  }

  @Shield(PrefixedJwtAuth)
  @Get('/prefixed')
  prefixed(req: Request) {
    return { id: principalId(req) };
  }
}

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ controllers: [ContextController] });
});
afterAll(() => h.close());

describe('the AuthContext a custom shield sees over HTTP', () => {
  it('carries the transport, credential, client id, remote address and route', async () => {
    seen.length = 0;
    expect((await h.get('/ctx/recorded?x=1', 'open-sesame')).json).toEqual({ id: 'recorded' });
    expect((await h.get('/ctx/recorded', 'wrong')).status).toBe(401);
    expect(seen).toEqual([
      { transport: 'http', credential: 'open-sesame', clientId: expect.any(String), remoteAddress: '127.0.0.1', route: { method: 'GET', path: '/ctx/recorded' } },
      { transport: 'http', credential: 'wrong', clientId: expect.any(String), remoteAddress: '127.0.0.1', route: { method: 'GET', path: '/ctx/recorded' } },
    ]);
  });

  it('keeps every field in a copy ({...ctx}) handed to a built-in shield', async () => {
    seen.length = 0;
    const jwt = h.container.resolve(JwtTokenIssuer).issueLoginPair('player-9').accessToken;
    expect((await h.get('/ctx/prefixed', `jwt:${jwt}`)).json).toEqual({ id: 'player-9' });
    expect((await h.get('/ctx/prefixed', jwt)).status).toBe(401);
    expect(seen[0]).toEqual({ transport: 'http', credential: jwt, clientId: expect.any(String), remoteAddress: '127.0.0.1', route: { method: 'GET', path: '/ctx/prefixed' } });
  });

  it('keeps serving shielded routes when the app\'s clientId(req) throws, using the connection id', async () => {
    const strict = await startHarness({
      controllers: [ContextController],
      app: { clientId: (req) => req.get('x-client-id') ?? (() => { throw new Error('no x-client-id header'); })() },
    });
    try {
      seen.length = 0;
      expect((await strict.get('/ctx/recorded', 'open-sesame')).json).toEqual({ id: 'recorded' });
      expect((await strict.request('GET', '/ctx/recorded', { token: 'open-sesame', headers: { 'x-client-id': 'c-7' } })).status).toBe(200);
      expect(seen.map((ctx) => ctx.clientId)).toEqual([expect.stringMatching(/^[0-9a-f-]{36}$/), 'c-7']);
    } finally {
      await strict.close();
    }
  });
});
