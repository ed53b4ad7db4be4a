/**
 * Controllers the express tests mount: an /auth subclass that records its hook
 * calls, an API with every kind of shield, and a custom shield with an injected service.
 */
import 'reflect-metadata';
import {
  Authorize, JwtShield, SessionShield, Shield,
  type Account, type AuthContext, type ShieldAuth, type ShieldResult, type UpgradeResult,
} from '@portcullis/core';
import type { Request } from 'express';
import { injectable } from 'tsyringe';
import {
  Controller, Delete, Get, JwtAuthController, Patch, Post, Put, clientIp, getPrincipal, principalId, principalName,
  type UpgradeContext,
} from '../../src/index.js';

/** Every hook call the auth controller saw, in order. */
export const hookCalls: Array<{ hook: string; args: unknown[] }> = [];
/** Usernames that get the admin role. */
export const admins = new Set<string>(['root']);
/** Set to make the next onUpgradeSuccess throw. */
export const failNextSuccess = { value: false };
/** Set to make the next getClaimsForLogin return a reserved claim (an application bug). */
export const reservedClaimNextLogin = { value: false };

export class TestAuthController extends JwtAuthController {
  override onUpgrade(ctx: UpgradeContext, clientId: string): UpgradeContext {
    hookCalls.push({ hook: 'onUpgrade', args: [ctx, clientId] });
    return { ...ctx, items: new Map([['from', 'onUpgrade']]) };
  }

  override onUpgradeSuccess(ctx: UpgradeContext, clientId: string, result: UpgradeResult): void {
    hookCalls.push({ hook: 'onUpgradeSuccess', args: [ctx, clientId, result] });
    if (failNextSuccess.value) {
      failNextSuccess.value = false;
      throw new Error('game session could not be created');
    }
  }

  override onUpgradeFailed(ctx: UpgradeContext, clientId: string): void {
    hookCalls.push({ hook: 'onUpgradeFailed', args: [ctx, clientId] });
  }

  override async getClaimsForLogin(account: Account, request: Request): Promise<Record<string, unknown>> {
    hookCalls.push({ hook: 'getClaimsForLogin', args: [account, request] });
    const claims = await super.getClaimsForLogin(account, request);
    if (reservedClaimNextLogin.value) {
      reservedClaimNextLogin.value = false;
      return { ...claims, sub: 'someone-else' };
    }
    return admins.has(account.username) ? { ...claims, role: 'admin' } : claims;
  }
}

/** The service a custom shield injects. */
@injectable()
export class ApiKeyRegistry {
  readonly owners = new Map<string, { id: string; roles: string[] }>([
    ['key-ada', { id: 'ada-bot', roles: ['bot'] }],
    ['key-banned', { id: 'banned-bot', roles: ['banned'] }],
  ]);
}

/** A custom shield: an API key as the bearer credential, owners looked up in an injected service. */
@injectable()
export class ApiKeyAuth implements ShieldAuth {
  constructor(private readonly keys: ApiKeyRegistry) {}

  authenticate(ctx: AuthContext): ShieldResult {
    const owner = ctx.credential === undefined ? undefined : this.keys.owners.get(ctx.credential);
    if (!owner) return { ok: false, code: 'unauthorized', message: 'an API key is required' };
    if (owner.roles.includes('banned')) return { ok: false, code: 'forbidden', message: 'this key is banned' };
    return { ok: true, principal: { id: owner.id, name: undefined, roles: owner.roles, claims: {}, via: 'custom' } };
  }
}

/** A shield whose backing store is down. */
export class BrokenAuth implements ShieldAuth {
  authenticate(): ShieldResult {
    throw new Error('store is down');
  }
}

@Controller('/api')
export class ApiController {
  @JwtShield
  @Get('/me')
  me(req: Request) {
    return { id: principalId(req), name: principalName(req), ip: clientIp(req) };
  }

  @Get('/open')
  open(req: Request) {
    return { open: true, id: principalId(req) ?? null };
  }

  @SessionShield
  @Get('/session')
  session(req: Request) {
    return { id: principalId(req), via: getPrincipal(req)?.via };
  }

  @Authorize({ roles: ['admin'] })
  @Get('/admin')
  admin(req: Request) {
    return { admin: principalId(req) };
  }

  @SessionShield
  @Authorize({ roles: ['admin'] })
  @Get('/session-admin')
  sessionAdmin(req: Request) {
    return { admin: principalId(req) };
  }

  @Shield(ApiKeyAuth)
  @Get('/bot')
  bot(req: Request) {
    return { bot: principalId(req), roles: getPrincipal(req)?.roles };
  }

  @Shield(BrokenAuth)
  @Get('/broken')
  broken() {
    return { never: true };
  }

  @Get('/throws')
  throws() {
    throw new Error('secret internal detail /etc/passwd');
  }

  @JwtShield
  @Get('/throws-shielded')
  throwsShielded() {
    throw new Error('secret internal detail /etc/passwd');
  }

  @JwtShield
  @Get('/rejects-shielded')
  async rejectsShielded() {
    throw new Error('secret internal detail /etc/passwd');
  }

  @Put('/put')
  put() {
    return { method: 'put' };
  }

  @Patch('/patch')
  patch() {
    return { method: 'patch' };
  }

  @Delete('/delete')
  remove() {
    return undefined;
  }
}

/** Every route needs a JWT, except where a method names another shield. */
@JwtShield
@Controller('/class')
export class ClassShieldedController {
  @Get('/a')
  a(req: Request) {
    return { route: 'a', id: principalId(req) };
  }

  @Shield(ApiKeyAuth)
  @Get('/b')
  b(req: Request) {
    return { route: 'b', id: principalId(req) };
  }

  @Get('/overridden')
  overridden() {
    return { route: 'base' };
  }
}

/** Inherits the class shield and the routes; adds a route and an admin-only class requirement. */
@Authorize({ roles: ['admin'] })
@Controller('/sub')
export class SubclassController extends ClassShieldedController {
  @Get('/c')
  c(req: Request) {
    return { route: 'c', id: principalId(req) };
  }

  override overridden() {
    return { route: 'sub' };
  }
}

/** A session shield on the class, for every route of it and of its subclasses. */
@SessionShield
@Controller('/sbase')
export class SessionShieldedBaseController {
  @Get('/whoami')
  whoami(req: Request) {
    return { route: 'whoami', id: principalId(req), via: getPrincipal(req)?.via };
  }
}

/** No shield and no @Authorize of its own: the base's class shield still guards its routes. */
@Controller('/schild')
export class SessionShieldedChildController extends SessionShieldedBaseController {
  @Get('/own')
  own(req: Request) {
    return { route: 'own', id: principalId(req), via: getPrincipal(req)?.via };
  }
}
