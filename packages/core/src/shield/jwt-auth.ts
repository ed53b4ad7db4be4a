import { isJwtShape } from '@portcullis/protocol';
import { injectable } from 'tsyringe';
import type { AuthContext, ShieldResult } from '../contracts/auth-context.js';
import type { Principal } from '../contracts/principal.js';
import type { ShieldAuth } from '../contracts/shield-auth.js';
import type { JwtClaims } from '../contracts/tokens.js';
import { PortcullisError } from '../errors/portcullis-error.js';
import { REFUSALS } from './shield-enforcer.js';
import { JwtTokenValidator } from '../jwt/jwt-token-validator.js';
import { TokenSessionSync } from '../session/token-session-sync.js';

type Refusal = Extract<ShieldResult, { ok: false }>;

/**
 * A verified, not invalidated JWT access token: its claims and the shield result for it.
 *
 * @example
 * ```ts
 * const verified = await jwtAuth.verify(bearer);
 * if (verified.ok) log.info('JWT connection', { jti: verified.claims.jti });
 * ```
 */
export interface VerifiedJwt {
  readonly ok: true;
  readonly credential: string;
  readonly claims: JwtClaims;
  readonly result: { readonly ok: true; readonly principal: Principal };
  /** Until when (epoch ms) the signature check may be skipped for this same credential. */
  readonly validUntilMs: number;
}

const MEMO_KEY = Symbol('portcullis:jwt-auth');
const refuse = (message: string): Refusal => Object.freeze({ ok: false, code: 'unauthorized', message });
const MISSING = refuse('a JWT access token is required');
const NOT_A_JWT = refuse('the credential is not a JWT access token');
const REVOKED = refuse('token refused: revoked');
const UNAVAILABLE: Refusal = REFUSALS.unavailable;
const refusals = new Map<string, Refusal>();

/**
 * The built-in JWT shield (`@JwtShield`): the credential must be a JWT access
 * token that `JwtTokenValidator` accepts (HS256, expiry, issuer, audience, type
 * `access`) and that no upgrade, logout or family revocation invalidated. A session
 * token is refused. On a connection (`ctx.memo`) the signature check of the same
 * token is done once until its `exp`; expiry and invalidation are checked on every
 * request. With the in-memory store, on a JWT near-cache hit (Redis), and for every
 * refusal the answer is synchronous, so the adapter can run the handler in the same tick.
 *
 * @example
 * ```ts
 * const auth = container.resolve(JwtAuth);
 * const result = await auth.authenticate({ transport: 'http', credential: jwt, clientId: 'r1', remoteAddress: undefined });
 * ```
 */
@injectable()
export class JwtAuth implements ShieldAuth {
  constructor(
    private readonly validator: JwtTokenValidator,
    private readonly sessions: TokenSessionSync,
  ) {}

  /**
   * Answers at once (no promise) when the store can tell without I/O (the in-memory
   * provider); otherwise a promise.
   */
  authenticate(ctx: AuthContext): ShieldResult | Promise<ShieldResult> {
    const verified = this.verifySignature(ctx.credential, ctx.memo);
    if (!verified.ok) return verified;
    const invalidated = this.sessions.isJwtInvalidatedNow(verified.claims);
    if (invalidated === undefined) return this.checkInvalidation(verified, ctx.memo).then((checked) => (checked.ok ? checked.result : checked));
    if (!invalidated) return verified.result;
    ctx.memo?.delete(MEMO_KEY);
    return REVOKED;
  }

  /**
   * Verifies a JWT access token and answers its claims too (the connection
   * registry needs the `jti`). Never throws for a bad token.
   *
   * @throws only for an unexpected store error other than `unavailable`.
   */
  async verify(credential: string | undefined, memo?: Map<unknown, unknown>): Promise<VerifiedJwt | Refusal> {
    const verified = this.verifySignature(credential, memo);
    return verified.ok ? this.checkInvalidation(verified, memo) : verified;
  }

  /** The signature and claims, from the memo while the same credential has not expired. */
  private verifySignature(credential: string | undefined, memo: Map<unknown, unknown> | undefined): VerifiedJwt | Refusal {
    if (credential === undefined || credential.length === 0) return MISSING;
    const kept = memo?.get(MEMO_KEY) as VerifiedJwt | undefined;
    if (kept !== undefined && kept.credential === credential && Date.now() < kept.validUntilMs) return kept;
    const checked = this.check(credential);
    if (checked.ok) memo?.set(MEMO_KEY, checked);
    else memo?.delete(MEMO_KEY);
    return checked;
  }

  private async checkInvalidation(verified: VerifiedJwt, memo: Map<unknown, unknown> | undefined): Promise<VerifiedJwt | Refusal> {
    try {
      if (await this.sessions.isJwtInvalidated(verified.claims)) {
        memo?.delete(MEMO_KEY);
        return REVOKED;
      }
    } catch (error) {
      if (error instanceof PortcullisError && error.code === 'unavailable') return UNAVAILABLE;
      throw error;
    }
    return verified;
  }

  private check(credential: string): VerifiedJwt | Refusal {
    if (!isJwtShape(credential)) return NOT_A_JWT;
    const validation = this.validator.validate(credential, 'access');
    if (!validation.ok) return refusalFor(validation.reason);
    const { claims, principal } = validation;
    return { ok: true, credential, claims, result: Object.freeze({ ok: true, principal }), validUntilMs: claims.exp * 1000 };
  }
}

function refusalFor(reason: string): Refusal {
  let refusal = refusals.get(reason);
  if (!refusal) refusals.set(reason, (refusal = refuse(`token refused: ${reason}`)));
  return refusal;
}
