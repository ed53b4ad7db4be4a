import { isJwtShape } from '@portcullis/protocol';
import { injectable } from 'tsyringe';
import type { AuthContext, ShieldResult } from '../contracts/auth-context.js';
import type { ShieldAuth } from '../contracts/shield-auth.js';
import type { JwtClaims } from '../contracts/tokens.js';
import { PortcullisError } from '../errors/portcullis-error.js';
import { REFUSALS } from '../contracts/refusals.js';
import { JwtTokenValidator } from '../jwt/jwt-token-validator.js';
import { TokenSessionSync } from '../session/token-session-sync.js';

type Refusal = Extract<ShieldResult, { ok: false }>;
type Accepted = Extract<ShieldResult, { ok: true }>;

/** A signature-checked JWT, kept in a connection's memo until its `exp`. */
interface VerifiedJwt {
  readonly ok: true;
  readonly claims: JwtClaims;
  readonly result: Accepted & { readonly credential: { readonly kind: 'jwt'; readonly token: string } };
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
 * token is refused. Its success names the accepted JWT (`credential`: token, `jti`,
 * login family). On a connection (`ctx.memo`) the signature check of the same
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
    return this.invalidationNow(verified, ctx.memo) ?? this.checkInvalidation(verified, ctx.memo);
  }

  /**
   * The verdict when the store can tell at once (the in-memory provider, or a
   * `jwt-near-cache-seconds` hit on Redis); undefined when it must be read. A miss reads
   * nothing: without the JWT near cache (the default) the read would warm nothing, and
   * with it the JWT is read again by the first request decided once the loop keeps up.
   */
  peek(ctx: AuthContext): ShieldResult | undefined {
    const verified = this.verifySignature(ctx.credential, ctx.memo);
    return verified.ok ? this.invalidationNow(verified, ctx.memo) : verified;
  }

  private invalidationNow(verified: VerifiedJwt, memo: Map<unknown, unknown> | undefined): ShieldResult | undefined {
    const invalidated = this.sessions.isJwtInvalidatedNow(verified.claims);
    if (invalidated === undefined) return undefined;
    if (!invalidated) return verified.result;
    memo?.delete(MEMO_KEY);
    return REVOKED;
  }

  /** The signature and claims, from the memo while the same credential has not expired. */
  private verifySignature(credential: string | undefined, memo: Map<unknown, unknown> | undefined): VerifiedJwt | Refusal {
    if (credential === undefined || credential.length === 0) return MISSING;
    const kept = memo?.get(MEMO_KEY) as VerifiedJwt | undefined;
    if (kept !== undefined && kept.result.credential.token === credential && Date.now() < kept.validUntilMs) return kept;
    const checked = this.check(credential);
    if (checked.ok) memo?.set(MEMO_KEY, checked);
    else memo?.delete(MEMO_KEY);
    return checked;
  }

  private async checkInvalidation(verified: VerifiedJwt, memo: Map<unknown, unknown> | undefined): Promise<ShieldResult> {
    try {
      if (await this.sessions.isJwtInvalidated(verified.claims)) {
        memo?.delete(MEMO_KEY);
        return REVOKED;
      }
    } catch (error) {
      if (error instanceof PortcullisError && error.code === 'unavailable') return UNAVAILABLE;
      throw error;
    }
    return verified.result;
  }

  private check(token: string): VerifiedJwt | Refusal {
    if (!isJwtShape(token)) return NOT_A_JWT;
    const validation = this.validator.validate(token, 'access');
    if (!validation.ok) return refusalFor(validation.reason);
    const { claims, principal } = validation;
    const credential = Object.freeze({ kind: 'jwt', token, jti: claims.jti, family: claims.fam } as const);
    return { ok: true, claims, result: Object.freeze({ ok: true, principal, credential }), validUntilMs: claims.exp * 1000 };
  }
}

function refusalFor(reason: string): Refusal {
  let refusal = refusals.get(reason);
  if (!refusal) refusals.set(reason, (refusal = refuse(`token refused: ${reason}`)));
  return refusal;
}
