import 'reflect-metadata';

/**
 * A decorator that works on a class and on an instance method, as the legacy
 * (`experimentalDecorators`) compiler calls it: `(constructor)` for a class,
 * `(prototype, key, descriptor)` for a method.
 *
 * @example
 * ```ts
 * const mark: ClassOrMethodDecorator = (target, key) => recordOn(target, key, SOME_KEY, true);
 * ```
 */
export type ClassOrMethodDecorator = (target: object, propertyKey?: string | symbol, descriptor?: PropertyDescriptor) => void;

/** Where a decorator was applied: the class itself, or one instance method of it. */
export type DecoratedTarget =
  | { readonly kind: 'class'; readonly target: Function }
  | { readonly kind: 'method'; readonly target: object; readonly key: string | symbol };

/** Names a decorated target for error messages, e.g. `GamePortal.move`. */
export function describeTarget(target: object, key?: string | symbol): string {
  const owner = typeof target === 'function' ? target : target.constructor;
  const name = (owner as Function | undefined)?.name || '<anonymous class>';
  return key === undefined ? name : `${name}.${String(key)}`;
}

/**
 * Classifies the arguments a decorator was called with, refusing what portcullis
 * does not support (static methods, properties, parameters).
 */
export function decoratedTarget(decorator: string, target: unknown, key?: string | symbol, descriptor?: unknown): DecoratedTarget {
  if (typeof target === 'function' && key === undefined) return { kind: 'class', target };
  if (typeof target === 'function') {
    throw new TypeError(`${decorator} cannot decorate the static method ${describeTarget(target, key)}; use an instance method`);
  }
  const isMethod = typeof target === 'object' && target !== null && key !== undefined
    && typeof (descriptor as PropertyDescriptor | undefined)?.value === 'function';
  if (!isMethod) throw new TypeError(`${decorator} decorates a class or an instance method only`);
  return { kind: 'method', target, key };
}

/** Reads the metadata declared on exactly this class or method (not inherited). */
export function ownMetadata<T>(metadataKey: symbol, where: DecoratedTarget): T | undefined {
  return where.kind === 'class'
    ? Reflect.getOwnMetadata(metadataKey, where.target)
    : Reflect.getOwnMetadata(metadataKey, where.target, where.key);
}

/** Records metadata on exactly this class or method. */
export function defineOwnMetadata(metadataKey: symbol, value: unknown, where: DecoratedTarget): void {
  if (where.kind === 'class') Reflect.defineMetadata(metadataKey, value, where.target);
  else Reflect.defineMetadata(metadataKey, value, where.target, where.key);
}
