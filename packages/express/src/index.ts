/**
 * @portcullis/express — the express 5 adapter: controller decorators mounted
 * through tsyringe, shields enforced by core's `ShieldEnforcer`, portcullis's
 * error formats and challenge writer, caller helpers, plain middleware, and the
 * abstract `JwtAuthController` with every `/auth` route.
 */
import 'reflect-metadata';
export { Controller } from './routing/controller.decorator.js';
export { Delete, Get, Patch, Post, Put } from './routing/route.decorators.js';
export { readControllerPrefix, readControllerRoutes, type ControllerRoute, type HttpMethod, type RouteDefinition } from './routing/route-metadata.js';
export { createPortcullisApp, mountControllers, type ControllerClass, type PortcullisAppOptions } from './mount/mount-controllers.js';
export { HttpRuntime, type PortcullisHttpOptions } from './mount/http-runtime.js';
export { authorize, jwtShield, sessionShield, shield, type ShieldMiddlewareOptions } from './middleware/shield-middleware.js';
export {
  CHALLENGE_WRITER, respondRefusal,
  type ChallengeCode, type ChallengeContext, type ChallengeWriter, type RefusalFormat,
} from './http/refusal-responder.js';
export { HTTP_ERROR_TABLE, httpErrorFor, type HttpErrorMapping } from './http/http-status-table.js';
export { portcullisErrorHandler, sendError, sendPortcullisError } from './http/error-handler.js';
export { DEFAULT_BODY_LIMIT, jsonBody } from './http/json-body.js';
export { clientIp } from './http/client-address.js';
export { authContextFromRequest, authContextOf, connectionClientId, getPrincipal, principalId, principalName } from './http/request-auth.js';
export { JwtAuthController, upgradeResponse, type SignupAttempt, type SignupRefusal } from './auth/jwt-auth-controller.js';
export type { LoginResponse, UpgradeResponse } from '@portcullis/protocol';
export type { UpgradeContext } from './auth/upgrade-context.js';
