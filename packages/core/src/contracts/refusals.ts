/**
 * The refusal contract: what the shield enforcer answers, and the fixed refusals
 * shields and adapters share.
 */
import { WIRE_ERROR_MESSAGES } from '@portcullis/protocol';
import type { RefusalCode } from '../errors/error-codes.js';
import { defaultRetryAfterMs } from '../errors/portcullis-error.js';
import type { AcceptedCredential } from './auth-context.js';
import type { Principal } from './principal.js';

export type { RefusalCode } from '../errors/error-codes.js';

/**
 * The enforcer's verdict; `principal` is undefined for an open gate or route, and
 * `credential` names what a built-in shield accepted. A `rate_limited` refusal says
 * in `retryAfterMs` when the caller's window ends.
 *
 * @example
 * ```ts
 * const verdict: EnforceResult = await enforcer.enforce(plan, ctx);
 * if (!verdict.ok) return reply(verdict.code, verdict.message);
 * ```
 */
export type EnforceResult =
  | { readonly ok: true; readonly principal: Principal | undefined; readonly credential?: AcceptedCredential }
  | { readonly ok: false; readonly code: RefusalCode; readonly message: string; readonly retryAfterMs?: number };

/**
 * The fixed refusals; their messages are safe to send to any client. `unavailable` carries
 * its default retry hint ({@link defaultRetryAfterMs}: a second).
 *
 * @example
 * ```ts
 * return REFUSALS.forbidden; // { ok: false, code: 'forbidden', message: 'the principal is not allowed here' }
 * ```
 */
export const REFUSALS: Readonly<Record<RefusalCode, EnforceResult & { ok: false }>> = Object.freeze({
  unauthorized: refusal('unauthorized'),
  forbidden: refusal('forbidden'),
  unavailable: refusal('unavailable'),
  rate_limited: refusal('rate_limited'),
});

function refusal(code: RefusalCode): EnforceResult & { ok: false } {
  const retryAfterMs = defaultRetryAfterMs(code);
  return Object.freeze(retryAfterMs === undefined ? { ok: false, code, message: WIRE_ERROR_MESSAGES[code] } : { ok: false, code, message: WIRE_ERROR_MESSAGES[code], retryAfterMs });
}
