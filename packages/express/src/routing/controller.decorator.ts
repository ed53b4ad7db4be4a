import 'reflect-metadata';
import { CONTROLLER_METADATA } from './route-metadata.js';

/**
 * Marks a class as an HTTP controller mounted under `prefix`. Only records
 * metadata; `mountControllers` reads it. Subclasses inherit the prefix unless
 * they declare their own.
 *
 * @throws TypeError when `prefix` is not a string starting with `/`, or the target is not a class.
 * @example
 * ```ts
 * @Controller('/api')
 * class ApiController {
 *   @Get('/me') me(req: Request) { return { id: principalId(req) }; }
 * }
 * ```
 */
export function Controller(prefix = '/'): ClassDecorator {
  if (typeof prefix !== 'string' || !prefix.startsWith('/')) {
    throw new TypeError(`@Controller(prefix) expects a path starting with "/", got ${JSON.stringify(prefix)}`);
  }
  return (target) => {
    if (typeof target !== 'function') throw new TypeError('@Controller decorates a class');
    Reflect.defineMetadata(CONTROLLER_METADATA, prefix, target);
  };
}
