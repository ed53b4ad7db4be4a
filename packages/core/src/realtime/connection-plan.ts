import type { AcceptedCredential } from '../contracts/auth-context.js';
import type { Principal } from '../contracts/principal.js';
import type { EnforceResult } from '../contracts/refusals.js';
import { shieldPlan, type ShieldPlan } from '../shield/shield-plan-reader.js';
import { SessionOrJwtAuth } from '../shield/session-or-jwt-auth.js';

/**
 * The plan every connection's credential is decided on (a WebSocket
 * `Authorization` header, an auth frame, a UDP datagram's `token`): a session
 * token or a JWT access token, no roles. The same enforcer that decides every
 * gate decides it, so a connection and a gate can never disagree on a credential.
 *
 * @example
 * ```ts
 * const verdict = await enforcer.decide(CONNECTION_PLAN, ctx);
 * ```
 */
export const CONNECTION_PLAN: ShieldPlan = shieldPlan(SessionOrJwtAuth);

/**
 * A connection's credential, as the enforcer accepted it: who it acts for and the
 * credential the connection registry indexes it by.
 *
 * @example
 * ```ts
 * if (admission.ok) registry.attach(clientId, admission);
 * ```
 */
export interface Admitted {
  readonly ok: true;
  readonly principal: Principal;
  readonly credential: AcceptedCredential;
}

/**
 * The answer to a connection's credential: {@link Admitted}, or the enforcer's refusal.
 *
 * @example
 * ```ts
 * const admission: Admission = await dispatcher.admit({ transport: 'tcp', credential: token, clientId, remoteAddress, memo });
 * if (!admission.ok) return refuse(admission.code);
 * ```
 */
export type Admission = Admitted | Extract<EnforceResult, { ok: false }>;

/**
 * How a connection ends when its credential is refused: `unavailable` when the
 * credential could not be checked (try again later), `unauthorized` otherwise.
 *
 * @example
 * ```ts
 * if (!admission.ok) return shut(closeReasonOf(admission)); // 'unauthorized' or 'unavailable'
 * ```
 */
export function closeReasonOf(refusal: Extract<Admission, { ok: false }>): 'unauthorized' | 'unavailable' {
  return refusal.code === 'unavailable' ? 'unavailable' : 'unauthorized';
}
