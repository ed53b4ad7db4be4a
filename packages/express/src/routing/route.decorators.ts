import 'reflect-metadata';
import { ROUTES_METADATA, type HttpMethod, type RouteDefinition } from './route-metadata.js';

function route(method: HttpMethod, decorator: string, path: string): MethodDecorator {
  if (typeof path !== 'string' || !path.startsWith('/')) {
    throw new TypeError(`${decorator}(path) expects a path starting with "/", got ${JSON.stringify(path)}`);
  }
  return (target, handler, descriptor) => {
    if (typeof target === 'function' || typeof descriptor?.value !== 'function') {
      throw new TypeError(`${decorator} decorates an instance method of a controller class`);
    }
    const declared = (Reflect.getOwnMetadata(ROUTES_METADATA, target) as RouteDefinition[] | undefined) ?? [];
    Reflect.defineMetadata(ROUTES_METADATA, Object.freeze([...declared, Object.freeze({ method, path, handler })]), target);
  };
}

/**
 * Route decorators: each records that the method answers `METHOD <prefix><path>`.
 * The method is called with `(req, res)`; what it returns is sent as JSON with
 * the current status (200 unless it set one); returning `undefined` without
 * sending anything answers 204. Only records metadata.
 *
 * @throws TypeError when `path` does not start with `/` or the target is not an instance method.
 * @example
 * ```ts
 * @Controller('/api')
 * class ScoresController {
 *   @Get('/scores') list() { return [{ name: 'ada', score: 3 }]; }
 *   @Post('/scores') add(req: Request, res: Response) { res.status(201); return { ok: true }; }
 * }
 * ```
 */
export const Get = (path = '/'): MethodDecorator => route('get', '@Get', path);

/**
 * Records a `POST` route; see {@link Get}.
 *
 * @example
 * ```ts
 * @Post('/scores') add(req: Request, res: Response) { res.status(201); return { ok: true }; }
 * ```
 */
export const Post = (path = '/'): MethodDecorator => route('post', '@Post', path);

/**
 * Records a `PUT` route; see {@link Get}.
 *
 * @example
 * ```ts
 * @Put('/profile') save(req: Request) { return profiles.save(principalId(req)!, req.body); }
 * ```
 */
export const Put = (path = '/'): MethodDecorator => route('put', '@Put', path);

/**
 * Records a `DELETE` route; see {@link Get}.
 *
 * @example
 * ```ts
 * @Delete('/profile') remove(req: Request) { return profiles.remove(principalId(req)!); }
 * ```
 */
export const Delete = (path = '/'): MethodDecorator => route('delete', '@Delete', path);

/**
 * Records a `PATCH` route; see {@link Get}.
 *
 * @example
 * ```ts
 * @Patch('/profile') rename(req: Request) { return profiles.rename(principalId(req)!, req.body.name); }
 * ```
 */
export const Patch = (path = '/'): MethodDecorator => route('patch', '@Patch', path);
