import type { AuthContext, ShieldResult } from './auth-context.js';

/**
 * IShieldAuth: one way of authenticating a request. Implement it to
 * make a custom shield and put it on a class or method with `@Shield(MyAuth)`.
 * Implementations are resolved through tsyringe, so they may inject services.
 *
 * Answer `{ ok: true, principal }` to let the request through, `unauthorized` when
 * the credential is missing or invalid, `forbidden` when it is valid but not
 * enough, `unavailable` when a backing store cannot be reached (fail closed).
 * Never throw for a bad credential; a thrown error is treated as `unavailable`.
 *
 * @example
 * ```ts
 * @injectable()
 * class ApiKeyAuth implements ShieldAuth {
 *   constructor(private readonly keys: ApiKeyStore) {}
 *   async authenticate(ctx: AuthContext): Promise<ShieldResult> {
 *     const owner = ctx.credential && await this.keys.owner(ctx.credential);
 *     return owner ? { ok: true, principal: owner } : { ok: false, code: 'unauthorized' };
 *   }
 * }
 * ```
 */
export interface ShieldAuth {
  authenticate(ctx: AuthContext): ShieldResult | Promise<ShieldResult>;
  /**
   * Optional. Called instead of `authenticate` for a request the server answers
   * `overloaded` without deciding it (its event loop is far behind): refresh what the
   * shield caches for `ctx`'s credential as a decision would, so that a long overload
   * does not leave every credential to be looked up again when it ends. Synchronous and
   * cheap: decide nothing, count nothing, never throw. `ctx.credential` is unverified
   * (anyone can send any string): touch only entries a verified credential put in your
   * cache, and never add one or read a store for one.
   *
   * @example
   * ```ts
   * keepWarm(ctx: AuthContext): void {
   *   if (ctx.credential) this.keys.touch(ctx.credential); // renews the cache entry if it is about to end
   * }
   * ```
   */
  keepWarm?(ctx: AuthContext): void;
  /**
   * Optional. The verdict `authenticate` would give, when the shield can give it at once
   * from what it holds (a cache, a store in this process); `undefined` when it would have
   * to wait. While the server's event loop is behind, a gate call read soon after it was
   * sent (WebSocket, TCP) is decided by `peek`: answered with its verdict, or refused
   * `overloaded` when there is none, so no request queues behind a lookup the busy loop
   * can only send when its turn ends. A shield without `peek` is not asked then (before
   * `peek`, a shield with `keepWarm` was asked `authenticate`; add `peek` to keep such
   * calls answered). On `undefined`, start what fills your cache for the credential (as
   * `authenticate` would), so its next request finds it; never return a promise. A shield
   * that wraps a built-in one passes `peek` on to it.
   *
   * @example
   * ```ts
   * peek(ctx: AuthContext): ShieldResult | undefined {
   *   const owner = ctx.credential === undefined ? undefined : this.keys.cached(ctx.credential);
   *   if (owner === undefined && ctx.credential) void this.keys.load(ctx.credential).catch(() => {});
   *   return owner && { ok: true, principal: owner };
   * }
   * ```
   */
  peek?(ctx: AuthContext): ShieldResult | undefined;
}

/**
 * The `I…` name for {@link ShieldAuth}, for those who look for it.
 *
 * @example
 * ```ts
 * class ApiKeyAuth implements IShieldAuth {
 *   authenticate(ctx: AuthContext): ShieldResult { return { ok: false, code: 'unauthorized' }; }
 * }
 * ```
 */
export type IShieldAuth = ShieldAuth;
