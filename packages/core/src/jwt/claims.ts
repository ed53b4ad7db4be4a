/**
 * Inbound claim mapping (`jwt:map-inbound-claims`) and the principal helpers
 * (`jwt:name-claim`). The map follows ASP.NET's JwtSecurityTokenHandler inbound
 * map, plus `name` → the name claim type, as docs/concepts.md describes.
 */
import type { SecurityConfig } from '../contracts/portcullis-config.js';
import type { Principal } from '../contracts/principal.js';
import type { JwtClaims } from '../contracts/tokens.js';

/**
 * The long claim-type URIs (the names of .NET's `ClaimTypes`) that mapped claims use.
 *
 * @example
 * ```ts
 * principal.claims[ClaimTypes.NameIdentifier]; // the `sub` when mapping is on
 * ```
 */
export const ClaimTypes = Object.freeze({
  Actor: 'http://schemas.xmlsoap.org/ws/2009/09/identity/claims/actor',
  AuthenticationMethod: 'http://schemas.microsoft.com/ws/2008/06/identity/claims/authenticationmethod',
  DateOfBirth: 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/dateofbirth',
  Email: 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress',
  Gender: 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/gender',
  GivenName: 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/givenname',
  Name: 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/name',
  NameIdentifier: 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/nameidentifier',
  Role: 'http://schemas.microsoft.com/ws/2008/06/identity/claims/role',
  Surname: 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/surname',
  Upn: 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/upn',
  Webpage: 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/webpage',
} as const);

/**
 * Issued claim name → long claim type, applied when `jwt:map-inbound-claims` is true.
 * Names not listed (`iss`, `aud`, `exp`, `jti`, `fam`, custom claims) keep their name.
 *
 * @example
 * ```ts
 * INBOUND_CLAIM_MAP.role; // 'http://schemas.microsoft.com/ws/2008/06/identity/claims/role'
 * ```
 */
export const INBOUND_CLAIM_MAP: Readonly<Record<string, string>> = Object.freeze(
  Object.assign(Object.create(null) as Record<string, string>, {
    sub: ClaimTypes.NameIdentifier,
    nameid: ClaimTypes.NameIdentifier,
    name: ClaimTypes.Name,
    unique_name: ClaimTypes.Name,
    email: ClaimTypes.Email,
    given_name: ClaimTypes.GivenName,
    family_name: ClaimTypes.Surname,
    birthdate: ClaimTypes.DateOfBirth,
    gender: ClaimTypes.Gender,
    website: ClaimTypes.Webpage,
    actort: ClaimTypes.Actor,
    upn: ClaimTypes.Upn,
    authmethod: ClaimTypes.AuthenticationMethod,
    role: ClaimTypes.Role,
    roles: ClaimTypes.Role,
    amr: 'http://schemas.microsoft.com/claims/authnmethodsreferences',
    acr: 'http://schemas.microsoft.com/claims/authnclassreference',
    idp: 'http://schemas.microsoft.com/identity/claims/identityprovider',
    oid: 'http://schemas.microsoft.com/identity/claims/objectidentifier',
    scp: 'http://schemas.microsoft.com/identity/claims/scope',
    tid: 'http://schemas.microsoft.com/identity/claims/tenantid',
  }),
);

/** For each long type, the issued names that map to it, in precedence order. */
const SOURCES: ReadonlyMap<string, readonly string[]> = (() => {
  const sources = new Map<string, string[]>();
  for (const [short, long] of Object.entries(INBOUND_CLAIM_MAP)) sources.set(long, [...(sources.get(long) ?? []), short]);
  return sources;
})();

/** For each mapped name, the names that take its long type first when present. */
const OUTRANKED_BY: Readonly<Record<string, readonly string[]>> = (() => {
  const rules: Record<string, readonly string[]> = Object.create(null);
  for (const names of SOURCES.values()) names.forEach((name, i) => (rules[name] = names.slice(0, i)));
  return rules;
})();

/** Defines an own data property, so a `__proto__` key stays a plain claim. */
function put(target: Record<string, unknown>, name: string, value: unknown): void {
  if (name === '__proto__') Object.defineProperty(target, name, { value, enumerable: true, writable: true, configurable: true });
  else target[name] = value;
}

function strings(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

function firstString(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  return Array.isArray(value) && typeof value[0] === 'string' ? value[0] : undefined;
}

/** The issued claim that owns a long type: the first of its sources the token has. */
function ownerOf(claims: Readonly<Record<string, unknown>>, long: string): string | undefined {
  return SOURCES.get(long)?.find((short) => Object.hasOwn(claims, short));
}

/**
 * Renames claims per {@link INBOUND_CLAIM_MAP}. When several issued claims map to one
 * type, the one listed first in the map owns it (`sub` before `nameid`, `name` before
 * `unique_name`) and the others keep their issued names, so nothing is lost; `role` and
 * `roles` are merged into one role claim (a string, or an array when there are several).
 * A claim already named by a long type gives way to the claim that maps onto it.
 *
 * @example
 * ```ts
 * mapInboundClaims({ sub: '42', role: 'admin' });
 * // { 'http://…/nameidentifier': '42', 'http://…/role': 'admin' }
 * ```
 */
export function mapInboundClaims(claims: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  let roles: string[] | undefined;
  for (const name of Object.keys(claims)) {
    const value = claims[name];
    const target = INBOUND_CLAIM_MAP[name];
    if (target === ClaimTypes.Role) {
      roles = [...(roles ?? []), ...strings(value)];
    } else if (target !== undefined) {
      put(out, OUTRANKED_BY[name]!.some((first) => Object.hasOwn(claims, first)) ? name : target, value);
    } else if (!SOURCES.has(name) || ownerOf(claims, name) === undefined) {
      put(out, name, value);
    }
  }
  if (roles) put(out, ClaimTypes.Role, roles.length === 1 ? roles[0] : [...new Set(roles)]);
  return out;
}

function rolesOf(claims: JwtClaims): readonly string[] {
  const role = strings(claims.role);
  if (!Object.hasOwn(claims, 'roles')) return Object.freeze(role);
  return Object.freeze([...new Set([...role, ...strings(claims.roles)])]);
}

function nameOf(claims: JwtClaims, view: Readonly<Record<string, unknown>>, security: SecurityConfig): string | undefined {
  const { nameClaim, mapInboundClaims: mapped } = security.jwt;
  if (nameClaim !== '') {
    const name = firstString(Object.hasOwn(claims, nameClaim) ? claims[nameClaim] : Object.hasOwn(view, nameClaim) ? view[nameClaim] : undefined);
    if (name !== undefined) return name;
  }
  return firstString(mapped ? view[ClaimTypes.Name] : claims.name);
}

/**
 * Builds the {@link Principal} of verified claims. `id` is `sub` (which mapping puts
 * under the name-identifier type); `name` reads the `jwt:name-claim` claim (by its
 * issued name, or by its long type when mapping is on), else the name claim (`name`,
 * or with mapping whichever of `name`/`unique_name` owns the name type); `roles` come
 * from `role` and `roles` (a string or an array of strings). `claims` are mapped or as
 * issued, per `jwt:map-inbound-claims`. The principal is plain frozen data.
 *
 * @example
 * ```ts
 * const p = principalFromClaims(claims, config.security);
 * p.roles.includes('admin');
 * ```
 */
export function principalFromClaims(claims: JwtClaims, security: SecurityConfig, via: 'jwt' | 'session' = 'jwt'): Principal {
  const view = security.jwt.mapInboundClaims ? Object.freeze(mapInboundClaims(claims)) : claims;
  const id = typeof claims.sub === 'string' ? claims.sub : (firstString(view[ClaimTypes.NameIdentifier]) ?? '');
  return Object.freeze({ id, name: nameOf(claims, view, security), roles: rolesOf(claims), claims: view, via });
}

/**
 * The caller's principal id: `sub`, or the name-identifier claim when claims are mapped.
 *
 * @example
 * ```ts
 * principalId(principal); // 'player-42'
 * ```
 */
export function principalId(principal: Principal): string {
  return principal.id !== '' ? principal.id : (firstString(principal.claims[ClaimTypes.NameIdentifier]) ?? firstString(principal.claims.sub) ?? '');
}

/**
 * The caller's name: the identity name, otherwise the `name` claim (issued or mapped).
 *
 * @example
 * ```ts
 * principalName(principal) ?? 'anonymous';
 * ```
 */
export function principalName(principal: Principal): string | undefined {
  return principal.name ?? firstString(principal.claims.name) ?? firstString(principal.claims[ClaimTypes.Name]);
}
