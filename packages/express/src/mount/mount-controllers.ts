/**
 * Mounts decorated controller classes on an express app through tsyringe.
 */
import { readShieldPlan, resolveAtStartup, severalAuthorizations } from '@portcullis/core/transport';
import express, { type Express, type IRouter, type RequestHandler, type Response } from 'express';
import type { DependencyContainer } from 'tsyringe';
import { portcullisErrorHandler, sendError } from '../http/error-handler.js';
import { HTTP_ERROR_TABLE } from '../http/http-status-table.js';
import { jsonBody } from '../http/json-body.js';
import { readControllerPrefix, readControllerRoutes } from '../routing/route-metadata.js';
import { HttpRuntime, type PortcullisHttpOptions } from './http-runtime.js';
import { ensureInjectable } from './injectable-controller.js';

/**
 * A controller class: decorated with `@Controller` (itself or a base class).
 *
 * @example
 * ```ts
 * const controllers: ControllerClass[] = [GameAuthController, ApiController];
 * ```
 */
export type ControllerClass = abstract new (...args: any[]) => object;

function send(res: Response, value: unknown): void {
  if (res.headersSent || res.writableEnded) return;
  if (value === undefined) {
    res.status(res.statusCode === 200 ? 204 : res.statusCode).end();
    return;
  }
  res.json(value);
}

function invoke(instance: object, handler: string | symbol): RequestHandler {
  const method = (instance as Record<string | symbol, unknown>)[handler];
  if (typeof method !== 'function') throw new TypeError(`controller route ${String(handler)} is not a method`);
  return (req, res, next) => {
    let result: unknown;
    try {
      result = method.call(instance, req, res);
      if (!(result instanceof Promise)) {
        send(res, result);
        return;
      }
    } catch (error) {
      next(error);
      return;
    }
    result.then((value) => send(res, value)).catch(next);
  };
}

/**
 * Resolves each controller through `container` (once, at mount time) and mounts
 * its routes on `app`. Each route runs, in order: its shield plan (class,
 * method and base-class decorators merged by core's `readShieldPlan`), the JSON
 * body parser (strict, 16 KiB by default), the handler, and an error handler
 * that answers `{error, message}`. Shields are resolved now, so missing services
 * fail at start-up, and the routes that answer anonymously are logged once.
 *
 * @throws TypeError when a class has no `@Controller` or no routes, or `shedWhenBehind` is
 *   neither a positive number nor `false`; a `PortcullisError`
 *   (`config_invalid`) naming the setting, the config file read, or the `@inject` to add
 *   when a controller or shield cannot be built.
 * @example
 * ```ts
 * const app = express();
 * mountControllers(app, container, [GameAuthController, ApiController]);
 * app.listen(3000);
 * ```
 */
export function mountControllers(
  app: Express | IRouter,
  container: DependencyContainer,
  controllers: readonly ControllerClass[],
  options: PortcullisHttpOptions = {},
): HttpRuntime {
  const runtime = new HttpRuntime(container, options);
  const parseJson = jsonBody(options.bodyLimit);
  const onError = portcullisErrorHandler(runtime.log);
  for (const controller of controllers) {
    if (readControllerPrefix(controller) === undefined) throw new TypeError(`${controller.name} is not a controller: decorate it (or a base class) with @Controller(prefix)`);
    const routes = readControllerRoutes(controller);
    if (routes.length === 0) throw new TypeError(`${controller.name} declares no routes (@Get, @Post, …)`);
    ensureInjectable(controller);
    const instance = resolveAtStartup(container, controller) as object;
    for (const route of routes) {
      const handle = invoke(instance, route.handler);
      // GET has no body to parse; skipping the parser keeps reads as cheap as they can be.
      const withBody: RequestHandler = route.method === 'get'
        ? handle
        : (req, res, next) => parseJson(req, res, (error?: unknown) => (error ? next(error) : handle(req, res, next)));
      const guard = runtime.guard(readShieldPlan(controller, route.handler), `${route.method.toUpperCase()} ${route.fullPath}`);
      // Guard, body and handler run as one express layer: fewer router hops per request.
      const layer: RequestHandler = guard
        ? (req, res, next) => guard(req, res, next, withBody)
        : (req, res, next) => {
            runtime.bind(req);
            if (severalAuthorizations(req)) return runtime.refuseSeveralAuthorizations(req, res, next);
            return withBody(req, res, next);
          };
      (app as IRouter)[route.method](route.fullPath, layer, onError);
    }
  }
  runtime.enforcer.announceAnonymous();
  return runtime;
}

/**
 * Options of {@link createPortcullisApp}.
 *
 * @example
 * ```ts
 * createPortcullisApp(container, { controllers: [ApiController], trustProxy: 'loopback', errorFormat: 'simple' });
 * ```
 */
export interface PortcullisAppOptions extends PortcullisHttpOptions {
  /** The controllers to mount. */
  readonly controllers: readonly ControllerClass[];
  /** express's `trust proxy` (default false: `clientIp` is the socket peer). */
  readonly trustProxy?: boolean | number | string | string[];
}

/**
 * An express 5 app with `controllers` mounted, JSON 404s for unknown routes and
 * a final error handler that never leaks a stack trace.
 *
 * @example
 * ```ts
 * const app = createPortcullisApp(container, { controllers: [GameAuthController, ApiController], trustProxy: 'loopback' });
 * app.listen(3000, '127.0.0.1');
 * ```
 */
export function createPortcullisApp(container: DependencyContainer, options: PortcullisAppOptions): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', options.trustProxy ?? false);
  const runtime = mountControllers(app, container, options.controllers, options);
  app.use((req, res) => {
    sendError(res, HTTP_ERROR_TABLE.not_found.status, 'not_found', 'no such route');
  });
  app.use(portcullisErrorHandler(runtime.log));
  return app;
}
