/**
 * What the shields established for one request, kept on the request under a
 * symbol (unreachable from request input), so nothing can be spoofed.
 */
import type { AuthContext, Principal } from '@portcullis/core';
import type { Request } from 'express';
import { CONTEXT_OWNER as OWNER, authContextFromRequest } from './auth-context-builder.js';

/** The auth state of one request: its context and, once a shield passed, the principal. */
export interface RequestAuth {
  readonly context: AuthContext;
  principal: Principal | undefined;
}

const AUTH = Symbol('portcullis:request-auth');
const BUILDER = Symbol('portcullis:context-builder');

type TaggedRequest = Request & { [AUTH]?: RequestAuth; [BUILDER]?: (req: Request) => AuthContext };
type TaggedContext = AuthContext & { [OWNER]?: RequestAuth };

/** Records the auth state of a request; used by the shield middleware. */
export function setRequestAuth(req: Request, auth: RequestAuth): void {
  (req as TaggedRequest)[AUTH] = auth;
  (auth.context as TaggedContext)[OWNER] = auth;
}

/** Records how this request's `AuthContext` is built, should a handler ask for it. */
export function setContextBuilder(req: Request, build: (req: Request) => AuthContext): void {
  (req as TaggedRequest)[BUILDER] = build;
}

/** The auth state recorded for a request, if a shield ran. */
export function getRequestAuth(req: Request): RequestAuth | undefined {
  return (req as TaggedRequest)[AUTH];
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
  const tagged = req as TaggedRequest;
  let auth = tagged[AUTH];
  if (!auth) setRequestAuth(req, (auth = { context: (tagged[BUILDER] ?? authContextFromRequest)(req), principal: undefined }));
  return auth.context;
}

/** The principal already established for the request an `AuthContext` was built for. */
export function establishedPrincipal(ctx: AuthContext): Principal | undefined {
  return (ctx as TaggedContext)[OWNER]?.principal;
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
  return (req as TaggedRequest)[AUTH]?.principal;
}
