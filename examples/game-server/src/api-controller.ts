/**
 * The example's `/api` routes: who am I, a short-lived token for me, and an admin page.
 */
import { AccessTokenIssuer, Authorize, JwtShield } from '@portcullis/core';
import { Controller, Get, Post, clientIp, getPrincipal, principalId, principalName } from '@portcullis/express';
import type { Request, Response } from 'express';
import { injectable } from 'tsyringe';

/** Lifetime of the tokens `POST /api/token` hands out. */
export const SHORT_TOKEN_SECONDS = 300;

/**
 * `GET /api/me` (JWT) → `{id, name, ip}`; `POST /api/token` (JWT) → a 5-minute
 * access token for the caller, within the caller's login; `GET /api/admin` → only for the role `admin`.
 *
 * @example
 * ```ts
 * mountControllers(app, container, [ApiController]);
 * ```
 */
@injectable()
@Controller('/api')
export class ApiController {
  constructor(private readonly tokens: AccessTokenIssuer) {}

  @JwtShield
  @Get('/me')
  me(req: Request) {
    return { id: principalId(req), name: principalName(req), ip: clientIp(req) };
  }

  @JwtShield
  @Post('/token')
  token(req: Request, res: Response) {
    res.setHeader('Cache-Control', 'no-store');
    const name = principalName(req);
    // Within the caller's login: its logout (or deletion) ends this token and its sessions too.
    const issued = this.tokens.issueForLogin(getPrincipal(req)!, name === undefined ? {} : { name }, SHORT_TOKEN_SECONDS);
    return { accessToken: issued.token, expiresIn: issued.expiresInSeconds };
  }

  @Authorize({ roles: ['admin'] })
  @Get('/admin')
  admin(req: Request) {
    return { admin: principalName(req) ?? principalId(req), message: 'welcome to the control room' };
  }
}
