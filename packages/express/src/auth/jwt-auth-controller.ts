/**
 * The JWT authentication controller: signup, login, refresh, upgrade and
 * logout at `/auth`, with the customisation hooks an application overrides.
 */
import {
  AllowAnonymous, JwtAuth, JwtTokenIssuer, JwtTokenValidator, LOGGER_FACTORY, LoginService, NeverShed, PortcullisError, SessionOrJwtAuth, Shield, ShieldEnforcer,
  TokenSessionSync, upgradeResponse,
  type Account, type JsonWebKeySet, type LoginCaller, type Logger, type LoggerFactory, type Principal, type UpgradeResult,
} from '@portcullis/core';
import { checkEmail, checkUsername, shieldPlan } from '@portcullis/core/transport';
import type { LoginResponse, SessionsResponse, UpgradeResponse } from '@portcullis/protocol';
import type { Request, Response } from 'express';
import { inject } from 'tsyringe';
import { clientIp } from '../http/client-address.js';
import { authContextOf } from '../http/request-auth.js';
import { Controller } from '../routing/controller.decorator.js';
import { Delete, Get, Post } from '../routing/route.decorators.js';
import { jsonObjectBody, requiredString } from './request-body.js';
import type { UpgradeContext } from './upgrade-context.js';

export { upgradeResponse };

/** Token responses must not be kept by a browser or a proxy cache (RFC 6749 §5.1). */
function noStore(res: Response): void {
  res.setHeader('Cache-Control', 'no-store');
}

const invalidToken = (message: string) => new PortcullisError('invalid_token', message);

/**
 * What the `onSignup` hook sees: the signup's email and username, trimmed and
 * already in a valid form. The password is not handed to hooks.
 *
 * @example
 * ```ts
 * const attempt: SignupAttempt = { email: 'ada@example.com', username: 'ada' };
 * ```
 */
export interface SignupAttempt {
  readonly email: string;
  readonly username: string;
}

/**
 * An `onSignup` hook's answer that refuses the signup: 400 `invalid_request` with
 * `refuse` as the message the client sees.
 *
 * @example
 * ```ts
 * const verdict: SignupRefusal = { refuse: 'that username is reserved' };
 * ```
 */
export interface SignupRefusal {
  readonly refuse: string;
}
const UPGRADE_PLAN = shieldPlan(JwtAuth);

/**
 * Extend it, decorate the subclass with nothing or its own `@Controller`, and
 * mount it: every route of the HTTP API (docs/http-api.md) is inherited. Constructed by
 * tsyringe with six services; the upgrade has the shield enforcer make the
 * same check `@JwtShield` makes on the presented JWT before any hook runs.
 * The routes that take no bearer (signup, logins, refresh, jwks) are `@AllowAnonymous`,
 * and so is the upgrade, whose handler checks its JWT itself (to answer
 * `invalid_token`): `svc:security:shields:fallback` never closes them.
 *
 * @example
 * ```ts
 * class GameAuthController extends JwtAuthController {
 *   override getClaimsForLogin(account: Account, request: Request) {
 *     return { ...super.getClaimsForLogin(account, request), role: admins.has(account.username) ? 'admin' : 'player' };
 *   }
 *   override async onUpgradeSuccess(ctx: UpgradeContext, clientId: string, result: UpgradeResult) {
 *     await players.load(result.principal.id);
 *   }
 * }
 * mountControllers(app, container, [GameAuthController]);
 * ```
 */
@Controller('/auth')
export abstract class JwtAuthController {
  protected readonly log: Logger;

  constructor(
    protected readonly validator: JwtTokenValidator,
    protected readonly loginService: LoginService,
    protected readonly sessions: TokenSessionSync,
    protected readonly issuer: JwtTokenIssuer,
    protected readonly shields: ShieldEnforcer,
    @inject(LOGGER_FACTORY) loggers: LoggerFactory,
  ) {
    this.log = loggers.create('portcullis:auth');
  }

  /** `POST /auth/signup` `{email, username, password, captchaToken?}` → 201 login response. */
  @AllowAnonymous
  @Post('/signup')
  async signup(req: Request, res: Response): Promise<LoginResponse> {
    noStore(res);
    const body = jsonObjectBody(req);
    await this.screenSignup({ email: checkEmail(body.email), username: checkUsername(body.username) }, req);
    const account = await this.loginService.signup(
      { email: body.email as string, username: body.username as string, password: body.password as string, captchaToken: body.captchaToken as string | undefined },
      { remoteAddress: clientIp(req) },
    );
    const response = await this.loginResponse(account, req);
    res.status(201);
    return response;
  }

  /** `POST /auth/login/emailpwd` `{email, password, captchaToken?}` → 200 login response. */
  @AllowAnonymous
  @Post('/login/emailpwd')
  async loginWithEmail(req: Request, res: Response): Promise<LoginResponse> {
    noStore(res);
    const body = jsonObjectBody(req);
    const account = await this.loginService.loginWithEmail(
      { email: body.email as string, password: body.password as string, captchaToken: body.captchaToken as string | undefined },
      { remoteAddress: clientIp(req) },
    );
    return this.loginResponse(account, req);
  }

  /** `POST /auth/login/unamepwd` `{username, password, captchaToken?}` → 200 login response. */
  @AllowAnonymous
  @Post('/login/unamepwd')
  async loginWithUsername(req: Request, res: Response): Promise<LoginResponse> {
    noStore(res);
    const body = jsonObjectBody(req);
    const account = await this.loginService.loginWithUsername(
      { username: body.username as string, password: body.password as string, captchaToken: body.captchaToken as string | undefined },
      { remoteAddress: clientIp(req) },
    );
    return this.loginResponse(account, req);
  }

  /**
   * `POST /auth/refresh` `{refreshToken}`: a JWT refresh token gives a new login
   * response, a session refresh token a new upgrade response; either is used up.
   */
  @AllowAnonymous
  @Post('/refresh')
  async refresh(req: Request, res: Response): Promise<LoginResponse | UpgradeResponse> {
    noStore(res);
    const result = await this.sessions.refresh(requiredString(jsonObjectBody(req), 'refreshToken'));
    return result.kind === 'login'
      ? { accessToken: result.pair.accessToken, refreshToken: result.pair.refreshToken }
      : upgradeResponse(result.session);
  }

  /**
   * `POST /auth/upgrade` with `Authorization: Bearer <JWT>` and `{token}` equal to
   * it → 200 upgrade response; the JWT is invalid from then on.
   */
  @AllowAnonymous
  @Post('/upgrade')
  async upgrade(req: Request, res: Response): Promise<UpgradeResponse> {
    noStore(res);
    const token = requiredString(jsonObjectBody(req), 'token');
    const { clientId, remoteAddress } = authContextOf(req);
    let ctx: UpgradeContext = { token, request: req, remoteAddress, principal: undefined, items: new Map() };
    const checked = await this.checkUpgradeToken(req, token);
    if (checked instanceof PortcullisError) return this.refuseUpgrade(ctx, clientId, checked);
    ctx = (await this.onUpgrade({ ...ctx, principal: checked }, clientId)) ?? { ...ctx, principal: checked };
    let result: UpgradeResult;
    try {
      result = await this.sessions.upgrade(ctx.token);
    } catch (error) {
      if (!(error instanceof PortcullisError)) throw error;
      return this.refuseUpgrade(ctx, clientId, error);
    }
    try {
      await this.onUpgradeSuccess(ctx, clientId, result);
    } catch (error) {
      // The JWT is already spent; a session the application could not set up must not survive.
      await this.sessions.revoke(result.accessToken).catch(() => false);
      throw error;
    }
    return upgradeResponse(result);
  }

  /**
   * `POST /auth/logout` with `Authorization: Bearer <session token or JWT>` → 204.
   * Revokes that session pair (or that JWT and its login family); sockets
   * authenticated with it are closed through the revocation event.
   */
  @NeverShed
  @Shield(SessionOrJwtAuth)
  @Post('/logout')
  async logout(req: Request, res: Response): Promise<void> {
    await this.sessions.revoke(authContextOf(req).credential!);
    res.status(204);
  }

  /**
   * `GET /auth/sessions` with a Bearer access token (JWT or session) → 200: the caller's
   * live logins, newest first, the caller's own marked `current`.
   */
  @NeverShed
  @Shield(SessionOrJwtAuth)
  @Get('/sessions')
  async listSessions(req: Request): Promise<SessionsResponse> {
    return { sessions: await this.sessions.listLogins(await this.loginCaller(req)) };
  }

  /**
   * `DELETE /auth/sessions/{id}` → 204: that login of the caller ends everywhere (its
   * JWTs, its session pairs, their sockets); 404 `not_found` when it is not the caller's.
   */
  @NeverShed
  @Shield(SessionOrJwtAuth)
  @Delete('/sessions/:id')
  async deleteSession(req: Request, res: Response): Promise<void> {
    const id = req.params['id'];
    const ended = typeof id === 'string' && (await this.sessions.endLogin(await this.loginCaller(req), id));
    if (!ended) throw new PortcullisError('not_found', 'no such session');
    res.status(204);
  }

  /** `DELETE /auth/sessions` → 204: every login of the caller except the current one ends. */
  @NeverShed
  @Shield(SessionOrJwtAuth)
  @Delete('/sessions')
  async deleteOtherSessions(req: Request, res: Response): Promise<void> {
    await this.sessions.endOtherLogins(await this.loginCaller(req));
    res.status(204);
  }

  /**
   * Hook OnSignup: runs on `POST /auth/signup` once the email and username are
   * valid, before the password check, the captcha and the account store. Answer
   * `{ refuse: message }` to refuse the signup with 400 `invalid_request` and that
   * message (nothing is created); answer nothing to let it proceed.
   *
   * @example
   * ```ts
   * override onSignup(attempt: SignupAttempt) {
   *   if (RESERVED.has(attempt.username.toLowerCase())) return { refuse: 'that username is reserved' };
   * }
   * ```
   */
  onSignup(_attempt: SignupAttempt, _request: Request): SignupRefusal | void | Promise<SignupRefusal | void> {}

  /**
   * `GET /auth/jwks.json` (anonymous) → the JWK Set of the active and previous Ed25519 public
   * keys in EdDSA mode; 404 `not_found` in HS256 mode, whose keys are secrets.
   */
  @AllowAnonymous
  @Get('/jwks.json')
  jwks(): JsonWebKeySet {
    const jwks = this.validator.jwks();
    if (!jwks) throw new PortcullisError('not_found', 'no public keys: tokens are signed with a shared secret (HS256)');
    return jwks;
  }

  /**
   * Hook OnUpgrade: runs before the upgrade, after the JWT verified. May
   * return a replaced context.
   */
  onUpgrade(ctx: UpgradeContext, _clientId: string): UpgradeContext | void | Promise<UpgradeContext | void> {
    return ctx;
  }

  /** Hook OnUpgradeSuccess: e.g. create a game session or load player data. A throw undoes the upgrade. */
  onUpgradeSuccess(_ctx: UpgradeContext, _clientId: string, _result: UpgradeResult): void | Promise<void> {}

  /** Hook OnUpgradeFailed: e.g. log the attempt. */
  onUpgradeFailed(_ctx: UpgradeContext, _clientId: string): void | Promise<void> {}

  /**
   * Hook GetClaimsForLogin: the custom claims of the login's JWTs (`sub` is
   * the account's `storageId`). Default `{ name: username, acc: storageId }`;
   * extend it, e.g. with a role claim (`role` or `roles`).
   */
  getClaimsForLogin(account: Account, _request: Request): Record<string, unknown> | Promise<Record<string, unknown>> {
    return { name: account.username, acc: account.storageId };
  }

  /** Runs the onSignup hook; its refusal becomes 400 `invalid_request`, a malformed answer a server error. */
  private async screenSignup(attempt: SignupAttempt, req: Request): Promise<void> {
    const verdict: unknown = await this.onSignup(attempt, req);
    if (verdict === undefined || verdict === null) return;
    const message = (verdict as Partial<SignupRefusal>).refuse;
    if (typeof message === 'string' && message.trim().length > 0) throw new PortcullisError('invalid_request', message);
    this.log.error('onSignup answered something that is not { refuse: message }; refusing the signup');
    throw new PortcullisError('internal', 'internal error');
  }

  /** The JWT's principal when the bearer equals the body token and the `@JwtShield` check accepts it; else the refusal. */
  private async checkUpgradeToken(req: Request, token: string): Promise<Principal | PortcullisError> {
    const ctx = authContextOf(req);
    if (ctx.credential !== token) return invalidToken('the Authorization bearer must equal the body token');
    const verdict = await this.shields.decide(UPGRADE_PLAN, ctx);
    if (verdict.ok) return verdict.principal!;
    if (verdict.code === 'unavailable') return new PortcullisError('unavailable', 'sessions are temporarily unavailable');
    return invalidToken(verdict.message);
  }

  private async refuseUpgrade(ctx: UpgradeContext, clientId: string, error: PortcullisError): Promise<never> {
    this.log.info('upgrade refused', { clientId, code: error.code, reason: error.message });
    await this.onUpgradeFailed(ctx, clientId);
    throw error;
  }

  private async loginCaller(req: Request): Promise<LoginCaller> {
    const caller = await this.sessions.loginCaller(authContextOf(req).credential!);
    // The shield accepted the token a moment ago; one revoked since is refused as it would be now.
    if (caller === undefined) throw new PortcullisError('unauthorized', 'the credential was revoked');
    return caller;
  }

  private async loginResponse(account: Account, req: Request): Promise<LoginResponse> {
    const claims = await this.getClaimsForLogin(account, req);
    let pair: ReturnType<JwtTokenIssuer['issueLoginPair']>;
    try {
      pair = this.issuer.issueLoginPair(account.storageId, claims);
    } catch (error) {
      // Claims the issuer refuses come from the application's hook, not the client: a server bug.
      if (!(error instanceof PortcullisError) || error.code !== 'invalid_request') throw error;
      this.log.error('getClaimsForLogin returned claims the issuer refuses', { reason: error.message });
      throw new PortcullisError('internal', 'internal error', { cause: error });
    }
    await this.sessions.recordLogin(account.storageId, pair.familyId, { ip: clientIp(req), userAgent: req.get('user-agent') });
    return { accessToken: pair.accessToken, refreshToken: pair.refreshToken };
  }
}
