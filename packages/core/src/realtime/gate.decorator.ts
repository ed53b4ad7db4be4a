import 'reflect-metadata';
import { decoratedTarget, describeTarget } from '../shield/decorator-target.js';
import { GATE_METADATA, GATE_METHODS_METADATA } from '../shield/metadata-keys.js';

/**
 * Exposes a method of a `@Portal` class as the gate `name`. The handler receives
 * `(data, clientId, ctx: GateContext)` and its result (or resolved promise) is the
 * reply's `data`. Records metadata only.
 *
 * @throws TypeError when `name` is empty, holds whitespace, or the target is not an instance method.
 * @example
 * ```ts
 * @Gate('ping') ping() { return 'pong'; }
 * ```
 */
export function Gate(name: string): MethodDecorator {
  if (typeof name !== 'string' || name.length === 0 || /\s/.test(name)) {
    throw new TypeError(`@Gate(name) expects a non-empty name without whitespace, e.g. @Gate('move')`);
  }
  return (target, propertyKey, descriptor) => {
    const where = decoratedTarget('@Gate', target, propertyKey, descriptor);
    if (where.kind !== 'method') throw new TypeError('@Gate decorates an instance method only');
    if (Reflect.hasOwnMetadata(GATE_METADATA, where.target, where.key)) {
      throw new TypeError(`${describeTarget(target, propertyKey)} already has a @Gate`);
    }
    Reflect.defineMetadata(GATE_METADATA, name, where.target, where.key);
    const declared: readonly (string | symbol)[] = Reflect.getOwnMetadata(GATE_METHODS_METADATA, where.target) ?? [];
    Reflect.defineMetadata(GATE_METHODS_METADATA, Object.freeze([...declared, where.key]), where.target);
  };
}
