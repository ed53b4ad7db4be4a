/**
 * The auth of one HTTP request: its transport-neutral `AuthContext`, and what
 * the shields established for it. No token is parsed here: the bearer text is
 * handed to the shields as it came. The state is kept beside the request (a
 * WeakMap) and on its socket under symbols, unreachable from request input, so
 * nothing can be spoofed.
 */
import { randomUUID } from 'node:crypto';
import type { Socket } from 'node:net';
import type { AuthContext, Principal } from '@portcullis/core';
import { bearerCredentialOf } from '@portcullis/core/transport';
import type { Request } from 'express';
import { clientIp } from './client-address.js';

// Kept on the socket under symbols (not reachable from request input), so they
// live and die with the connection without a WeakMap lookup per request.
const CONNECTION_ID = Symbol('portcullis:connection-id');
const CONNECTION_MEMO = Symbol('portcullis:connection-memo');
type TaggedSocket = Socket & { [CONNECTION_ID]?: string; [CONNECTION_MEMO]?: Map<unknown, unknown> };

// Kept beside the request, not on it: adding properties to express's request object costs
// more per request than a WeakMap lookup.
const CONTEXT = new WeakMap<Request, AuthContext>();
const BUILDER = new WeakMap<Request, (req: Request) => AuthContext>();
/** Where a context holds the principal a shield established for its request. */
const PRINCIPAL = Symbol('portcullis:principal');

type TaggedContext = AuthContext & { [PRINCIPAL]?: Principal | undefined };

/**
 * The default client id: one id per TCP connection, so the requests a client
 * sends over one keep-alive connection share it.
 *
 * @example
 * ```ts
 * createPortcullisApp(container, { controllers, clientId: (req) => req.get('x-client-id') ?? connectionClientId(req) });
 * ```
 */
export function connectionClientId(req: Request): string {
  const socket = req.socket as TaggedSocket;
  return (socket[CONNECTION_ID] ??= randomUUID());
}

/**
 * The shields' memo of one keep-alive connection. Shields key what they keep by
 * the exact credential and re-check expiry and revocation on every request, so a
 * connection that carries several credentials stays correct (it only misses).
 */
export function connectionMemo(req: Request): Map<unknown, unknown> {
  const socket = req.socket as TaggedSocket;
  return (socket[CONNECTION_MEMO] ??= new Map());
}

/**
 * The `AuthContext` of one HTTP request. Every field is an own data property, so a
 * shield that copies the context (`{ ...ctx, credential }`) to hand a built-in
 * shield keeps them all.
 */
class HttpAuthContext implements AuthContext {
  readonly transport = 'http' as const;
  readonly clientId: string;
  readonly remoteAddress: string | undefined;
  readonly route: { readonly method: string; readonly path: string };
  /**
   * The principal a shield established for this request: the context is the request's
   * whole auth state (one object per request). Under a symbol, so it is no field of the
   * `AuthContext` a shield reads (it is still an own property: a copy takes it along).
   */
  [PRINCIPAL]: Principal | undefined = undefined;

  constructor(
    readonly credential: string | undefined,
    readonly memo: Map<unknown, unknown>,
    req: Request,
    clientIdOf: (req: Request) => string,
  ) {
    this.clientId = clientIdOf(req);
    this.remoteAddress = clientIp(req);
    this.route = { method: req.method, path: req.path };
  }
}

/**
 * Builds the `AuthContext` of an HTTP request: the bearer credential (none when the
 * request carries several `Authorization` headers), the client
 * id, the client address (`req.ip`, which honours the app's `trust proxy` and
 * nothing else), the route, and the shields' memo (per connection unless
 * `perConnectionMemo` is false, then per request).
 *
 * @example
 * ```ts
 * const ctx = authContextFromRequest(req);
 * await enforcer.enforce(plan, ctx);
 * ```
 */
export function authContextFromRequest(
  req: Request,
  clientIdOf: (req: Request) => string = connectionClientId,
  perConnectionMemo = true,
): AuthContext {
  const memo = perConnectionMemo ? connectionMemo(req) : new Map<unknown, unknown>();
  return new HttpAuthContext(bearerCredentialOf(req) ?? undefined, memo, req, clientIdOf);
}

/** The request's recorded context, built with `build` and recorded on first use. */
export function requestContext(req: Request, build: (req: Request) => AuthContext): AuthContext {
  let context = CONTEXT.get(req);
  if (context === undefined) CONTEXT.set(req, (context = build(req)));
  return context;
}

/** Records the principal a shield established for the request `ctx` was recorded for. */
export function recordPrincipal(ctx: AuthContext, principal: Principal | undefined): void {
  (ctx as TaggedContext)[PRINCIPAL] = principal;
}

/** Records how this request's `AuthContext` is built, should a handler ask for it. */
export function setContextBuilder(req: Request, build: (req: Request) => AuthContext): void {
  BUILDER.set(req, build);
}

/**
 * The request's transport-neutral `AuthContext` (credential, client id, remote
 * address, route), built on first use with the app's settings.
 *
 * @example
 * ```ts
 * @Post('/hello') hello(req: Request) { return { clientId: authContextOf(req).clientId }; }
 * ```
 */
export function authContextOf(req: Request): AuthContext {
  return requestContext(req, BUILDER.get(req) ?? authContextFromRequest);
}

/**
 * The principal already established for the request an `AuthContext` was built
 * for; on a copy of the context, the principal as it was when the copy was made.
 */
export function establishedPrincipal(ctx: AuthContext): Principal | undefined {
  return (ctx as TaggedContext)[PRINCIPAL];
}

/**
 * The principal a shield established for this request; undefined on an open route.
 *
 * @example
 * ```ts
 * @JwtShield @Get('/me') me(req: Request) { return getPrincipal(req)!.roles; }
 * ```
 */
export function getPrincipal(req: Request): Principal | undefined {
  const context = CONTEXT.get(req);
  return context && establishedPrincipal(context);
}

/**
 * The principal id of the request (`sub`, or the name-identifier claim when
 * inbound claims are mapped); undefined on an open route or without a principal.
 *
 * @example
 * ```ts
 * @JwtShield @Get('/me') me(req: Request) { return { id: principalId(req) }; }
 * ```
 */
export function principalId(req: Request): string | undefined {
  return getPrincipal(req)?.id;
}

/**
 * The identity name of the request's principal (`jwt:name-claim`, otherwise the
 * `name` claim); undefined when there is none.
 *
 * @example
 * ```ts
 * res.json({ hello: principalName(req) ?? 'stranger' });
 * ```
 */
export function principalName(req: Request): string | undefined {
  return getPrincipal(req)?.name;
}
