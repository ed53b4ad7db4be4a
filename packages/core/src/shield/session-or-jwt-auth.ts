import { credentialKind } from '@portcullis/protocol';
import { injectable } from 'tsyringe';
import type { AuthContext, ShieldResult } from '../contracts/auth-context.js';
import type { ShieldAuth } from '../contracts/shield-auth.js';
import { JwtAuth } from './jwt-auth.js';
import { SessionAuth } from './session-auth.js';

/**
 * A shield that accepts either credential portcullis issues: a session token
 * (checked by `SessionAuth`, as is a session named by an authenticated UDP
 * datagram's `sid`) or a JWT access token (checked by `JwtAuth`), told
 * apart by shape. It guards `POST /auth/logout`, which revokes whichever the
 * client holds.
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

  authenticate(ctx: AuthContext): ShieldResult | Promise<ShieldResult> {
    return isSession(ctx) ? this.sessionAuth.authenticate(ctx) : this.jwtAuth.authenticate(ctx);
  }

  /** Whichever shield the credential's shape names answers, as in {@link authenticate}. */
  peek(ctx: AuthContext): ShieldResult | undefined {
    return isSession(ctx) ? this.sessionAuth.peek(ctx) : this.jwtAuth.peek(ctx);
  }

  /** A session's near-cache entry is kept as `SessionAuth` keeps it; a JWT's check keeps nothing to renew. */
  keepWarm(ctx: AuthContext): void {
    if (isSession(ctx)) this.sessionAuth.keepWarm(ctx);
  }
}

function isSession(ctx: AuthContext): boolean {
  return ctx.sessionId !== undefined || credentialKind(ctx.credential) === 'session';
}
