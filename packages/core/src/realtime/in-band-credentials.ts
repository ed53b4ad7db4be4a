/**
 * A live connection's credential changed in band: a refresh frame rotates its session
 * pair, a second auth frame of the same principal replaces its token. Either answer
 * leaves the connection open; a refusal leaves it as it was.
 */
import { SESSION_TOKEN_SUFFIX, type AuthReply, type RefreshReply, type UpgradeResponse, type WireErrorCode } from '@portcullis/protocol';
import type { UpgradeResult } from '../contracts/sessions.js';
import { PortcullisError, retryAfterMsOf, TokenError } from '../errors/portcullis-error.js';
import type { TokenSessionSync } from '../session/token-session-sync.js';
import { authReply, frameError } from './auth-frame.js';
import type { Admission, Admitted } from './connection-plan.js';

/**
 * An in-band answer, and the credential the connection goes on with when it was accepted.
 *
 * @example
 * ```ts
 * const { reply, admitted } = await dispatcher.refreshConnection(frame.token, conn.principalId);
 * if (admitted) registry.attach(conn.clientId, admitted);
 * ```
 */
export interface InBandOutcome<R> {
  readonly reply: R;
  readonly admitted?: Admitted;
}

/**
 * The wire form of an upgrade (or session refresh) result, with the session's `udpKey`
 * (the HTTP answers and the in-band refresh frame alike).
 *
 * @example
 * ```ts
 * res.json(upgradeResponse(await sessions.upgrade(jwt)));
 * ```
 */
export function upgradeResponse(result: UpgradeResult): UpgradeResponse {
  return {
    accessToken: result.accessToken,
    refreshToken: result.refreshToken,
    accessExpiration: result.accessExpiration.toISOString(),
    refreshExpiration: result.refreshExpiration.toISOString(),
    ...(result.udpKey === undefined ? {} : { udpKey: result.udpKey }),
  };
}

/** Rotates the session pair of a refresh frame, for a connection of `principalId` (undefined: not authenticated). */
export async function refreshInBand(
  sessions: Pick<TokenSessionSync, 'refresh'>,
  token: string,
  principalId: string | undefined,
): Promise<InBandOutcome<RefreshReply>> {
  if (principalId === undefined) return { reply: refreshRefusal('unauthorized', 'authenticate the connection first') };
  if (!token.endsWith(SESSION_TOKEN_SUFFIX)) return { reply: refreshRefusal('bad_request', 'a refresh frame carries a session refresh token') };
  try {
    const result = await sessions.refresh(token, principalId);
    if (result.kind !== 'session') return { reply: refreshRefusal('bad_request', 'a refresh frame carries a session refresh token') };
    const { session } = result;
    return {
      reply: { type: 'refresh', ok: true, ...upgradeResponse(session) },
      admitted: { ok: true, principal: session.principal, credential: { kind: 'session', token: session.accessToken } },
    };
  } catch (error) {
    const code = codeOf(error);
    return { reply: refreshRefusal(code, undefined, retryAfterMsOf(error, code)) };
  }
}

/** The answer to a second auth frame: accepted only for a valid token of the connection's principal. */
export function reauthentication(admission: Admission, principalId: string | undefined): InBandOutcome<AuthReply> {
  if (!admission.ok) return { reply: authReply(admission) };
  if (principalId !== undefined && admission.principal.id !== principalId) {
    return { reply: { type: 'auth', ok: false, error: { code: 'forbidden', message: 'the token names another principal' } } };
  }
  return { reply: { type: 'auth', ok: true }, admitted: admission };
}

function refreshRefusal(code: WireErrorCode, message?: string, retryAfterMs?: number): RefreshReply {
  return { type: 'refresh', ok: false, error: frameError(code, message, retryAfterMs) };
}

function codeOf(error: unknown): WireErrorCode {
  if (error instanceof TokenError) return 'unauthorized';
  if (error instanceof PortcullisError && (error.code === 'forbidden' || error.code === 'unavailable')) return error.code;
  return 'internal';
}
