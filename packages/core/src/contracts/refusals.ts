/**
 * The refusal contract: what the shield enforcer answers, and the fixed refusals
 * shields and adapters share.
 */
import type { AcceptedCredential } from './auth-context.js';
import type { Principal } from './principal.js';

/**
 * A refusal's code: no or bad credential, not enough rights, or a backing store is down.
 *
 * @example
 * ```ts
 * const statusOf: Record<RefusalCode, number> = { unauthorized: 401, forbidden: 403, unavailable: 503 };
 * ```
 */
export type RefusalCode = 'unauthorized' | 'forbidden' | 'unavailable';

/**
 * The enforcer's verdict; `principal` is undefined for an open gate or route, and
 * `credential` names what a built-in shield accepted.
 *
 * @example
 * ```ts
 * const verdict: EnforceResult = await enforcer.enforce(plan, ctx);
 * if (!verdict.ok) return reply(verdict.code, verdict.message);
 * ```
 */
export type EnforceResult =
  | { readonly ok: true; readonly principal: Principal | undefined; readonly credential?: AcceptedCredential }
  | { readonly ok: false; readonly code: RefusalCode; readonly message: string };

/**
 * The fixed refusals; their messages are safe to send to any client.
 *
 * @example
 * ```ts
 * return REFUSALS.forbidden; // { ok: false, code: 'forbidden', message: 'the principal is not allowed here' }
 * ```
 */
export const REFUSALS: Readonly<Record<RefusalCode, EnforceResult & { ok: false }>> = Object.freeze({
  unauthorized: Object.freeze({ ok: false, code: 'unauthorized', message: 'a valid credential is required' }),
  forbidden: Object.freeze({ ok: false, code: 'forbidden', message: 'the principal is not allowed here' }),
  unavailable: Object.freeze({ ok: false, code: 'unavailable', message: 'authentication is temporarily unavailable' }),
});
