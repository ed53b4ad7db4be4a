import 'reflect-metadata';
import { describeTarget } from '../shield/decorator-target.js';
import { PORTAL_METADATA } from '../shield/metadata-keys.js';

const PORTAL_PATH = /^\/[^\s]*$/;

/**
 * Mounts a class as a real-time portal at `path` (for example `/game`); its
 * `@Gate` methods answer requests `{ portal: path, gate: name }`. Records
 * metadata only; the `GateDispatcher` reads it when the portal is registered.
 *
 * @throws TypeError when `path` does not start with `/` or holds whitespace, or when used on a method.
 * @example
 * ```ts
 * @Portal('/game')
 * @SessionShield
 * class GamePortal {
 *   @Gate('move') move(data: { x: number; y: number }, clientId: string, ctx: GateContext) { ... }
 * }
 * ```
 */
export function Portal(path: string): ClassDecorator {
  if (typeof path !== 'string' || !PORTAL_PATH.test(path)) {
    throw new TypeError(`@Portal(path) expects a path starting with "/" and without whitespace, e.g. @Portal('/game')`);
  }
  return (target: Function, ...methodArguments: unknown[]) => {
    if (typeof target !== 'function' || methodArguments.length > 0) throw new TypeError('@Portal decorates a class only');
    if (Reflect.hasOwnMetadata(PORTAL_METADATA, target)) throw new TypeError(`${describeTarget(target)} already has a @Portal`);
    Reflect.defineMetadata(PORTAL_METADATA, path, target);
  };
}
