import { isSessionToken } from '@portcullis/protocol';
import { injectable } from 'tsyringe';
import type { AuthContext, ShieldResult } from '../contracts/auth-context.js';
import type { Principal } from '../contracts/principal.js';
import type { ShieldAuth } from '../contracts/shield-auth.js';
import { PortcullisError } from '../errors/portcullis-error.js';
import { REFUSALS } from '../contracts/refusals.js';
import { TokenSessionSync } from '../session/token-session-sync.js';

type Refusal = Extract<ShieldResult, { ok: false }>;

interface SessionMemo {
  readonly credential: string;
  readonly result: Extract<ShieldResult, { ok: true }>;
}

const MEMO_KEY = Symbol('portcullis:session-auth');
const refuse = (message: string): Refusal => Object.freeze({ ok: false, code: 'unauthorized', message });
const MISSING = refuse('a session token is required');
const NOT_A_SESSION = refuse('the credential is not a session token');
const INVALID = refuse('the session token is unknown, expired or revoked');
const UNAVAILABLE: Refusal = REFUSALS.unavailable;

/**
 * The built-in session shield (`@SessionShield`): the credential must be a live
 * session token (`<uuid v4>;session`); a JWT is refused. Its success names the
 * accepted session token (`credential`). A session named by an authenticated UDP
 * datagram (`ctx.sessionId`, its `sid`) is checked the same way, by its sid. Every request asks the
 * session near cache (`peek`: a map lookup and a clock read, bounded by
 * `session:near-cache-seconds` and the token's expiry, dropped on revocation
 * events) and, on a miss, the store (`validate`). So a revoked or expired session
 * stops working at its next message.
 *
 * On a connection (`ctx.memo`) the answer object is kept, so a message whose
 * session is still in the near cache allocates nothing; the connection registry
 * clears it when the session is revoked.
 *
 * @example
 * ```ts
 * @Portal('/game')
 * @Shield(SessionAuth) // same as @SessionShield
 * class GamePortal { ... }
 * ```
 */
@injectable()
export class SessionAuth implements ShieldAuth {
  constructor(private readonly sessions: TokenSessionSync) {}

  /** Answers at once (no promise) when the near cache holds the session; otherwise a promise. */
  authenticate(ctx: AuthContext): ShieldResult | Promise<ShieldResult> {
    return this.answerNow(ctx) ?? this.read(ctx);
  }

  /**
   * The verdict from the near cache, or undefined on a miss; a miss starts the store read
   * a decision makes, which fills the near cache for the session's next request.
   */
  peek(ctx: AuthContext): ShieldResult | undefined {
    const now = this.answerNow(ctx);
    // The read's failure (the store is down) is left to the next decided request to report.
    if (now === undefined) this.read(ctx).then(undefined, () => {});
    return now;
  }

  /**
   * For a shed request: reads the session token's near-cache entry, which queues its
   * renewal when it is near its end, exactly as a decision's read does; decides nothing.
   * (A datagram's `sid` session was read already, when the datagram was admitted.)
   */
  keepWarm(ctx: AuthContext): void {
    if (ctx.sessionId === undefined && ctx.credential !== undefined) this.sessions.peek(ctx.credential);
  }

  /**
   * The verdict without waiting: a refusal of what is no session token, or the near
   * cache's answer; undefined when the store must be read. A session named by an
   * authenticated datagram's sid has the same near cache and store record as its token.
   */
  private answerNow(ctx: AuthContext): ShieldResult | undefined {
    const { sessionId, credential, memo } = ctx;
    if (sessionId !== undefined) {
      const principal = this.sessions.peekSid(sessionId);
      return principal === undefined ? undefined : sidAnswer(sessionId, principal);
    }
    if (credential === undefined || credential.length === 0) return MISSING;
    const kept = keptFor(credential, memo);
    if (kept === undefined && !isSessionToken(credential)) return NOT_A_SESSION;
    const principal = this.sessions.peek(credential);
    return principal === undefined ? undefined : answer(credential, principal, memo, kept);
  }

  /** The store's answer for a credential {@link answerNow} could not decide. */
  private read(ctx: AuthContext): Promise<ShieldResult> {
    const { sessionId, credential, memo } = ctx;
    if (sessionId !== undefined) return this.sessions.validateSid(sessionId).then((validated) => sidAnswer(sessionId, validated), unavailableOrThrow);
    return this.sessions.validate(credential!).then((validated) => answer(credential!, validated, memo, keptFor(credential!, memo)), unavailableOrThrow);
  }
}

/** The connection's kept answer when it is for this credential. */
function keptFor(credential: string, memo: Map<unknown, unknown> | undefined): SessionMemo | undefined {
  const kept = memo?.get(MEMO_KEY) as SessionMemo | undefined;
  return kept !== undefined && kept.credential === credential ? kept : undefined;
}

function unavailableOrThrow(error: unknown): Refusal {
  if (error instanceof PortcullisError && error.code === 'unavailable') return UNAVAILABLE;
  throw error;
}

function sidAnswer(sid: string, principal: Principal | undefined): ShieldResult {
  if (principal === undefined) return INVALID;
  return { ok: true, principal, credential: { kind: 'udp-session', sid } };
}

/** The result for a looked-up principal, reusing the connection's kept answer when it is the same. */
function answer(credential: string, principal: Principal | undefined, memo: Map<unknown, unknown> | undefined, kept: SessionMemo | undefined): ShieldResult {
  if (principal === undefined) {
    memo?.delete(MEMO_KEY);
    return INVALID;
  }
  if (kept !== undefined && kept.result.principal === principal) return kept.result;
  const result = Object.freeze({ ok: true, principal, credential: Object.freeze({ kind: 'session', token: credential } as const) } as const);
  memo?.set(MEMO_KEY, { credential, result });
  return result;
}
