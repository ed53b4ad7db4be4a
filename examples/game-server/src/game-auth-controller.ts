/**
 * The example's `/auth` controller: every route of `JwtAuthController`, with the
 * hooks overridden to show where a game plugs in.
 */
import {
  JwtTokenIssuer, JwtTokenValidator, LOGGER_FACTORY, LoginService, ShieldEnforcer, TokenSessionSync,
  type Account, type LoggerFactory, type UpgradeResult,
} from '@portcullis/core';
import { Controller, JwtAuthController, type UpgradeContext } from '@portcullis/express';
import type { Request } from 'express';
import { inject, injectable } from 'tsyringe';
import { ADMIN_ACCOUNTS } from './admin-users.js';

/**
 * `/auth` for the game: the operator's admin accounts get the role `admin`; upgrades
 * are logged, which is where a game would create the player's session.
 *
 * @example
 * ```ts
 * mountControllers(app, container, [GameAuthController]);
 * ```
 */
@injectable()
@Controller('/auth')
export class GameAuthController extends JwtAuthController {
  constructor(
    validator: JwtTokenValidator,
    loginService: LoginService,
    sessions: TokenSessionSync,
    issuer: JwtTokenIssuer,
    shields: ShieldEnforcer,
    @inject(LOGGER_FACTORY) loggers: LoggerFactory,
    @inject(ADMIN_ACCOUNTS) private readonly admins: ReadonlySet<string>,
  ) {
    super(validator, loginService, sessions, issuer, shields, loggers);
  }

  override async getClaimsForLogin(account: Account, request: Request): Promise<Record<string, unknown>> {
    const claims = await super.getClaimsForLogin(account, request);
    return { ...claims, role: this.admins.has(account.storageId) ? ['player', 'admin'] : ['player'] };
  }

  override onUpgrade(ctx: UpgradeContext, clientId: string): UpgradeContext {
    this.log.info('upgrade requested', { clientId, player: ctx.principal?.id });
    return ctx;
  }

  override onUpgradeSuccess(ctx: UpgradeContext, clientId: string, result: UpgradeResult): void {
    this.log.info('player session opened', { clientId, player: result.principal.id, until: result.accessExpiration.toISOString() });
  }

  override onUpgradeFailed(ctx: UpgradeContext, clientId: string): void {
    this.log.info('upgrade refused', { clientId, address: ctx.remoteAddress });
  }
}
