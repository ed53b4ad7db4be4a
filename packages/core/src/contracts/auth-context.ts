import type { RefusalCode } from '../errors/error-codes.js';
import type { Principal } from './principal.js';

/**
 * The transports a request can arrive on.
 *
 * @example
 * ```ts
 * if (ctx.transport === 'udp') return { ok: false, code: 'forbidden', message: 'not over UDP' };
 * ```
 */
export type Transport = 'http' | 'ws' | 'tcp' | 'udp';

/**
 * The transport-neutral view of a request that shields decide on. Adapters build
 * it from their native input; nothing else of the transport reaches a shield.
 *
 * @example
 * ```ts
 * const ctx: AuthContext = { transport: 'ws', credential: token, clientId: 'c1', remoteAddress: '127.0.0.1', portal: '/game', gate: 'move' };
 * ```
 */
export interface AuthContext {
  readonly transport: Transport;
  /** The bearer credential as presented (session token or JWT), if any. */
  readonly credential: string | undefined;
  /**
   * A session named by its UDP `sid` (32 hex digits) instead of a bearer token. Set
   * only by a transport that checked the datagram's MAC under that session's UDP key
   * (so the sender holds the key); the session shield then checks that session as it
   * checks a session token.
   */
  readonly sessionId?: string;
  /** A stable id of the client connection (or of the HTTP request). */
  readonly clientId: string;
  /** The peer address after trusted proxies were accounted for. */
  readonly remoteAddress: string | undefined;
  /** HTTP: method and route path. */
  readonly route?: { readonly method: string; readonly path: string };
  /** Real-time: the portal path and gate name. */
  readonly portal?: string;
  readonly gate?: string;
  /**
   * Per-connection memo that shields may use to skip repeated work for the same
   * credential. Kept while the connection lives, also when its credential is
   * replaced (an HTTP keep-alive connection may carry a different bearer on each
   * request), so an entry must record the credential it was made for and be used
   * only for that one, as the built-in shields do. Cleared by the connection
   * registry when the connection closes or its credential is revoked.
   */
  readonly memo?: Map<unknown, unknown>;
}

/**
 * The portcullis credential a built-in shield accepted: a session token, a session
 * named by the `sid` of an authenticated UDP datagram, or a JWT access token with
 * its `jti` and login family. The connection registry indexes a
 * connection by it, so a revocation naming any of these closes the connection.
 *
 * @example
 * ```ts
 * if (verdict.ok && verdict.credential?.kind === 'jwt') audit.log('JWT connection', verdict.credential.jti);
 * ```
 */
export type AcceptedCredential =
  | { readonly kind: 'session'; readonly token: string }
  /** A session named by the `sid` of an authenticated UDP datagram. */
  | { readonly kind: 'udp-session'; readonly sid: string }
  | { readonly kind: 'jwt'; readonly token: string; readonly jti: string; readonly family: string | undefined };

/**
 * The outcome of one shield: a principal, or a refusal with its code. The
 * built-in shields also say which credential they accepted; a custom shield may.
 *
 * @example
 * ```ts
 * const result: ShieldResult = owner ? { ok: true, principal: owner } : { ok: false, code: 'unauthorized' };
 * ```
 */
export type ShieldResult =
  | { readonly ok: true; readonly principal: Principal; readonly credential?: AcceptedCredential }
  | { readonly ok: false; readonly code: RefusalCode; readonly message?: string };
