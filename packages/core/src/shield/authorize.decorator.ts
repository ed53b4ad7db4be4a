import { decoratedTarget, defineOwnMetadata, ownMetadata, type ClassOrMethodDecorator } from './decorator-target.js';
import { AUTHORIZE_METADATA } from './metadata-keys.js';

/**
 * What `@Authorize` accepts.
 *
 * @example
 * ```ts
 * const adminsOnly: AuthorizeOptions = { roles: ['admin'] };
 * @Authorize(adminsOnly) @Get('/admin') stats() { ... }
 * ```
 */
export interface AuthorizeOptions {
  /** The principal needs at least one of these roles. Omit for "any authenticated principal". */
  readonly roles?: readonly string[];
}

/**
 * One recorded `@Authorize`: `roles` empty means any authenticated principal.
 *
 * @example
 * ```ts
 * const adminOrOps: AuthorizeRequirement = { roles: ['admin', 'ops'] }; // one of them
 * ```
 */
export interface AuthorizeRequirement {
  readonly roles: readonly string[];
}

/**
 * Requires an authenticated principal and, with `roles`, at least one of those
 * roles (like ASP.NET's `[Authorize(Roles = "a,b")]`). Every `@Authorize` that
 * applies to a method must hold: the class's, its base classes', the method's.
 * Without a shield on the class or method, the principal comes from `JwtAuth`.
 * Spelled `@Authorize`, `@Authorize()` or `@Authorize({ roles: ['admin'] })`.
 *
 * @throws TypeError when `roles` is given but is not a non-empty array of non-empty strings.
 * @example
 * ```ts
 * @Controller('/api')
 * class AdminController {
 *   @Authorize({ roles: ['admin'] })
 *   @Get('/admin') stats() { ... }
 * }
 * ```
 */
export function Authorize(options?: AuthorizeOptions): ClassOrMethodDecorator;
export function Authorize(target: Function): void;
export function Authorize(target: object, propertyKey: string | symbol, descriptor?: PropertyDescriptor): void;
export function Authorize(first?: object, propertyKey?: string | symbol, descriptor?: PropertyDescriptor): ClassOrMethodDecorator | void {
  if (typeof first === 'function' || propertyKey !== undefined) {
    record({ roles: [] }, first as object, propertyKey, descriptor);
    return;
  }
  const requirement = requirementOf(first as AuthorizeOptions | undefined);
  return (target, key, desc) => record(requirement, target, key, desc);
}

function requirementOf(options: AuthorizeOptions | undefined): AuthorizeRequirement {
  if (options === undefined || options === null) return Object.freeze({ roles: Object.freeze([]) });
  if (typeof options !== 'object') throw new TypeError('@Authorize(options) expects { roles?: string[] }');
  const { roles } = options;
  if (roles === undefined) return Object.freeze({ roles: Object.freeze([]) });
  const valid = Array.isArray(roles) && roles.length > 0 && roles.every((role) => typeof role === 'string' && role.length > 0);
  if (!valid) throw new TypeError('@Authorize({ roles }) expects a non-empty array of non-empty role names, e.g. { roles: ["admin"] }');
  return Object.freeze({ roles: Object.freeze([...roles]) });
}

function record(requirement: AuthorizeRequirement, target: object, key?: string | symbol, descriptor?: PropertyDescriptor): void {
  const where = decoratedTarget('@Authorize', target, key, descriptor);
  const declared = ownMetadata<readonly AuthorizeRequirement[]>(AUTHORIZE_METADATA, where) ?? [];
  defineOwnMetadata(AUTHORIZE_METADATA, Object.freeze([...declared, requirement]), where);
}
