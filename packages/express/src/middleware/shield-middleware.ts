/**
 * Plain middleware for apps without controller classes: the same shields and
 * enforcer as the decorators, applied per route.
 */
import 'reflect-metadata';
import {
  Authorize, JwtAuth, SessionAuth, Shield,
  type AuthContext, type ShieldAuth, type ShieldClass, type ShieldResult,
} from '@portcullis/core';
import { LoadShedder, readShieldPlan, type ShieldPlan } from '@portcullis/core/transport';
import type { RequestHandler } from 'express';
import { container as rootContainer, type DependencyContainer } from 'tsyringe';
import { establishedPrincipal } from '../http/request-auth.js';
import { HttpRuntime, type PortcullisHttpOptions } from '../mount/http-runtime.js';

/**
 * Options of the plain middleware: the HTTP options plus the container to resolve shields from.
 * Each middleware takes them on its own: `shedWhenBehind: false` on every portcullis middleware
 * of a route that revokes keeps it answering while the loop is behind.
 *
 * @example
 * ```ts
 * app.get('/api/me', jwtShield({ container, errorFormat: 'simple' }), handler);
 * ```
 */
export interface ShieldMiddlewareOptions extends PortcullisHttpOptions {
  /** Where shields and their services resolve; default tsyringe's root container. */
  readonly container?: DependencyContainer;
}

/** Passes the principal an earlier shield middleware established on this request. */
class EstablishedPrincipalAuth implements ShieldAuth {
  authenticate(ctx: AuthContext): ShieldResult {
    const principal = establishedPrincipal(ctx);
    return principal ? { ok: true, principal } : { ok: false, code: 'unauthorized' };
  }
}

/** The plan of a one-off class carrying the given decorators, read by core's one reader. */
function planOf(...decorators: Array<(target: Function) => void>): ShieldPlan {
  class PlainRoute {
    handle(): void {}
  }
  for (const decorate of decorators) decorate(PlainRoute);
  return readShieldPlan(PlainRoute, 'handle');
}

function lazyMiddleware(options: ShieldMiddlewareOptions, pick: (runtime: HttpRuntime) => RequestHandler): RequestHandler {
  // The runtime is built on the first request (the container may not be ready before); a bad setting fails now.
  if (options.shedWhenBehind !== undefined) LoadShedder.limitOf(options.shedWhenBehind);
  let handler: RequestHandler | undefined;
  return (req, res, next) => {
    handler ??= pick(new HttpRuntime(options.container ?? rootContainer, options));
    return handler(req, res, next);
  };
}

/**
 * Middleware protecting a route with any shield class, like `@Shield(AuthClass)`.
 *
 * @throws TypeError when `shedWhenBehind` is neither a positive number nor `false`.
 * @example
 * ```ts
 * app.get('/keys', shield(ApiKeyAuth, { container }), (req, res) => res.json({ id: principalId(req) }));
 * ```
 */
export function shield(auth: ShieldClass, options: ShieldMiddlewareOptions = {}): RequestHandler {
  const plan = planOf(Shield(auth));
  return lazyMiddleware(options, (runtime) => runtime.shieldMiddleware(plan)!);
}

/**
 * Only requests with a valid, not invalidated JWT access token pass (`@JwtShield`).
 *
 * @example
 * ```ts
 * app.get('/api/me', jwtShield({ container }), (req, res) => res.json({ id: principalId(req) }));
 * ```
 */
export function jwtShield(options: ShieldMiddlewareOptions = {}): RequestHandler {
  return shield(JwtAuth, options);
}

/**
 * Only requests with a live session token pass (`@SessionShield`).
 *
 * @example
 * ```ts
 * app.post('/game/state', sessionShield({ container }), handler);
 * ```
 */
export function sessionShield(options: ShieldMiddlewareOptions = {}): RequestHandler {
  return shield(SessionAuth, options);
}

/**
 * Requires an authenticated principal with one of `roles` (`@Authorize`). After
 * another shield middleware it checks the principal that shield established;
 * on its own it authenticates with `JwtAuth` first.
 *
 * @example
 * ```ts
 * app.get('/api/admin', authorize({ roles: ['admin'], container }), handler);
 * app.get('/game/admin', sessionShield({ container }), authorize({ roles: ['admin'], container }), handler);
 * ```
 */
export function authorize(options: ShieldMiddlewareOptions & { readonly roles?: readonly string[] } = {}): RequestHandler {
  const requirement = Authorize(options.roles ? { roles: options.roles } : undefined);
  const alone = planOf(requirement);
  const afterShield = planOf(Shield(EstablishedPrincipalAuth), requirement);
  return lazyMiddleware(options, (runtime) => {
    const jwt = runtime.shieldMiddleware(alone)!;
    const established = runtime.shieldMiddleware(afterShield)!;
    return (req, res, next) => (establishedPrincipal(runtime.contextOf(req)) ? established : jwt)(req, res, next);
  });
}
