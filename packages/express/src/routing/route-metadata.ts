/**
 * Metadata keys of the controller and route decorators, and their one reader.
 */
import 'reflect-metadata';

/** On a class: the controller's path prefix (inherited by subclasses). */
export const CONTROLLER_METADATA = Symbol.for('portcullis:express:controller');

/** On a prototype (own only): the routes that prototype declared. */
export const ROUTES_METADATA = Symbol.for('portcullis:express:routes');

/**
 * The HTTP methods a route decorator can declare.
 *
 * @example
 * ```ts
 * const method: HttpMethod = 'post';
 * ```
 */
export type HttpMethod = 'get' | 'post' | 'put' | 'delete' | 'patch';

/**
 * One route as declared by `@Get`, `@Post`, …: method, path and the handler's key.
 *
 * @example
 * ```ts
 * const { method, path, handler }: RouteDefinition = readControllerRoutes(ApiController)[0]!;
 * ```
 */
export interface RouteDefinition {
  readonly method: HttpMethod;
  readonly path: string;
  readonly handler: string | symbol;
}

/**
 * A controller route ready to mount: the full path joins the prefix and the route path.
 *
 * @example
 * ```ts
 * for (const route of readControllerRoutes(ApiController)) console.log(route.method, route.fullPath);
 * ```
 */
export interface ControllerRoute extends RouteDefinition {
  readonly fullPath: string;
}

/** Joins path segments with exactly one `/` between them; `/` for nothing. */
export function joinPaths(...parts: string[]): string {
  const joined = parts.map((p) => p.replace(/^\/+|\/+$/g, '')).filter((p) => p.length > 0).join('/');
  return `/${joined}`;
}

/**
 * The prefix of `@Controller`, from the class or its nearest decorated base; undefined when none.
 *
 * @example
 * ```ts
 * readControllerPrefix(GameAuthController); // '/auth', inherited from JwtAuthController
 * ```
 */
export function readControllerPrefix(controller: Function): string | undefined {
  return Reflect.getMetadata(CONTROLLER_METADATA, controller) as string | undefined;
}

/**
 * Every route of a controller class, base classes included. A method key
 * declared again by a subclass replaces the base declaration; an override
 * without a route decorator keeps the base's route and runs the override.
 *
 * @example
 * ```ts
 * readControllerRoutes(GameAuthController); // [{ method: 'post', path: '/signup', handler: 'signup', fullPath: '/auth/signup' }, …]
 * ```
 */
export function readControllerRoutes(controller: Function): ControllerRoute[] {
  const prefix = readControllerPrefix(controller) ?? '';
  const routes: RouteDefinition[] = [];
  const claimed = new Set<string | symbol>();
  for (let p: object | null = controller.prototype; p && p !== Object.prototype; p = Object.getPrototypeOf(p)) {
    const declared = (Reflect.getOwnMetadata(ROUTES_METADATA, p) as RouteDefinition[] | undefined) ?? [];
    routes.push(...declared.filter((route) => !claimed.has(route.handler)));
    for (const route of declared) claimed.add(route.handler);
  }
  return routes.map((route) => ({ ...route, fullPath: joinPaths(prefix, route.path) }));
}
