import type { AuthContext, Transport } from '../contracts/auth-context.js';
import type { Principal } from '../contracts/principal.js';

/**
 * What a transport knows about one connection, handed to the dispatcher with
 * every request. A `LiveConnection` from the `ConnectionRegistry` is one.
 *
 * @example
 * ```ts
 * const conn: ConnectionContext = { clientId: 'ws-1', transport: 'ws', remoteAddress: '10.0.0.7', credential: token, memo: new Map() };
 * ```
 */
export interface ConnectionContext {
  readonly clientId: string;
  readonly transport: Transport;
  readonly remoteAddress: string | undefined;
  /** The one credential the connection authenticated with; undefined when anonymous. */
  readonly credential: string | undefined;
  /** Per-connection memo for shields (see `AuthContext.memo`). */
  readonly memo?: Map<unknown, unknown>;
  /** UDP: every request carries its own `token` field, which is the credential. */
  readonly tokenInFrame?: boolean;
  /** UDP: the authenticated datagram's session `sid` (hex), after its MAC checked out (see `AuthContext.sessionId`). */
  readonly sessionId?: string;
}

/**
 * The third argument of a gate handler: the request's auth context plus the
 * principal the shield established (undefined on an open gate).
 *
 * @example
 * ```ts
 * @Gate('whoami') whoami(_data: unknown, _clientId: string, ctx: GateContext) { return ctx.principal?.id; }
 * ```
 */
export interface GateContext extends AuthContext {
  readonly principal: Principal | undefined;
}

/**
 * A gate handler: receives the request's `data`, the client id and the context;
 * its result (or resolved value) becomes the reply's `data`.
 *
 * @example
 * ```ts
 * const ping: GateHandler = () => 'pong';
 * ```
 */
export type GateHandler = (data: unknown, clientId: string, ctx: GateContext) => unknown;
