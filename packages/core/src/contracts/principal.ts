/**
 * Who a request acts for, as the shields established it. The same shape comes
 * from a JWT (claims mapped per `jwt:map-inbound-claims`) and from a session token
 * (the principal stored at upgrade).
 *
 * @example
 * ```ts
 * if (principal.roles.includes('admin')) { ... }
 * ```
 */
export interface Principal {
  /** The principal id: `sub`, or the name-identifier claim when inbound claims are mapped. */
  readonly id: string;
  /** The identity name: the `jwt:name-claim` claim, otherwise `name`; undefined when absent. */
  readonly name: string | undefined;
  /** Roles from the role claim (`role`/`roles`, or its mapped URI). */
  readonly roles: readonly string[];
  /** The claims as the application sees them (mapped or as issued, per configuration). */
  readonly claims: Readonly<Record<string, unknown>>;
  /** How the principal was authenticated. */
  readonly via: 'jwt' | 'session' | 'custom';
}
