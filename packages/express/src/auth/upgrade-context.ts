import type { Principal } from '@portcullis/core';
import type { Request } from 'express';

/**
 * The upgrade request context, passed to the upgrade hooks of
 * `JwtAuthController`. `onUpgrade` may return a replaced one (spread this one
 * and change what you need); the upgrade then uses its `token`.
 *
 * @example
 * ```ts
 * override onUpgrade(ctx: UpgradeContext) {
 *   return { ...ctx, items: new Map([...ctx.items, ['region', 'eu']]) };
 * }
 * ```
 */
export interface UpgradeContext {
  /** The JWT access token being upgraded (the `Authorization` bearer, equal to the body's `token`). */
  readonly token: string;
  /** The HTTP request. */
  readonly request: Request;
  /** The client's address, per the app's `trust proxy`. */
  readonly remoteAddress: string | undefined;
  /** Who the JWT was issued to; undefined when it did not verify. */
  readonly principal: Principal | undefined;
  /** Free-form values a hook hands to the later hooks. */
  readonly items: ReadonlyMap<string, unknown>;
}
