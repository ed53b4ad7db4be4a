import {
  JwtAuth, SESSION_TOKEN_SUFFIX, SessionAuth,
  type AuthContext, type ShieldAuth, type ShieldResult,
} from '@portcullis/core';
import { injectable } from 'tsyringe';

/**
 * A shield that accepts either credential portcullis issues: a session token
 * (checked by `SessionAuth`) or a JWT access token (checked by `JwtAuth`). It
 * guards `POST /auth/logout`, which revokes whichever the client holds.
 *
 * @example
 * ```ts
 * @Shield(SessionOrJwtAuth)
 * @Post('/logout') logout(req: Request) { ... }
 * ```
 */
@injectable()
export class SessionOrJwtAuth implements ShieldAuth {
  constructor(
    private readonly sessionAuth: SessionAuth,
    private readonly jwtAuth: JwtAuth,
  ) {}

  authenticate(ctx: AuthContext): Promise<ShieldResult> {
    const isSession = ctx.credential?.endsWith(SESSION_TOKEN_SUFFIX) === true;
    return isSession ? this.sessionAuth.authenticate(ctx) : this.jwtAuth.authenticate(ctx);
  }
}
