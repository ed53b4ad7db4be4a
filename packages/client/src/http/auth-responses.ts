import { PortcullisClientError } from '../errors/portcullis-client-error.js';

/**
 * The login response: a JWT access token and a JWT refresh token.
 *
 * @example
 * ```ts
 * const { accessToken } = await client.loginWithUsername('alice', 'pw');
 * ```
 */
export interface LoginTokens {
  readonly accessToken: string;
  readonly refreshToken: string;
}

/**
 * The upgrade response, with the expirations read as dates. Both tokens are
 * `<uuid>;session`.
 *
 * @example
 * ```ts
 * const session = await client.upgrade();
 * console.log(session.accessExpiration.toISOString());
 * ```
 */
export interface SessionTokens {
  readonly accessToken: string;
  readonly refreshToken: string;
  readonly accessExpiration: Date;
  readonly refreshExpiration: Date;
}

/**
 * What `POST /auth/refresh` gave back: a JWT refresh token gives a new login pair,
 * a session refresh token a new session pair.
 *
 * @example
 * ```ts
 * const r = await client.refresh();
 * if (r.kind === 'session') console.log(r.tokens.accessExpiration);
 * ```
 */
export type RefreshResult =
  | { readonly kind: 'login'; readonly tokens: LoginTokens }
  | { readonly kind: 'session'; readonly tokens: SessionTokens };

function malformed(what: string): PortcullisClientError {
  return new PortcullisClientError('unexpected_response', `the server's ${what} does not follow the contract`);
}

function field(body: unknown, name: string): unknown {
  return typeof body === 'object' && body !== null ? (body as Record<string, unknown>)[name] : undefined;
}

function stringField(body: unknown, name: string, what: string): string {
  const value = field(body, name);
  if (typeof value !== 'string' || value.length === 0) throw malformed(what);
  return value;
}

function dateField(body: unknown, name: string, what: string): Date {
  const date = new Date(stringField(body, name, what));
  if (Number.isNaN(date.getTime())) throw malformed(what);
  return date;
}

/**
 * Reads a login response body.
 *
 * @example
 * ```ts
 * const tokens = parseLoginResponse(await res.json());
 * ```
 */
export function parseLoginResponse(body: unknown): LoginTokens {
  return {
    accessToken: stringField(body, 'accessToken', 'login response'),
    refreshToken: stringField(body, 'refreshToken', 'login response'),
  };
}

/**
 * Reads an upgrade response body; the expirations become `Date`s.
 *
 * @example
 * ```ts
 * const session = parseUpgradeResponse(await res.json());
 * ```
 */
export function parseUpgradeResponse(body: unknown): SessionTokens {
  return {
    accessToken: stringField(body, 'accessToken', 'upgrade response'),
    refreshToken: stringField(body, 'refreshToken', 'upgrade response'),
    accessExpiration: dateField(body, 'accessExpiration', 'upgrade response'),
    refreshExpiration: dateField(body, 'refreshExpiration', 'upgrade response'),
  };
}

/**
 * Reads a refresh response: an upgrade response when it carries expirations,
 * a login response otherwise.
 *
 * @example
 * ```ts
 * const result = parseRefreshResponse(await res.json());
 * ```
 */
export function parseRefreshResponse(body: unknown): RefreshResult {
  return field(body, 'accessExpiration') === undefined
    ? { kind: 'login', tokens: parseLoginResponse(body) }
    : { kind: 'session', tokens: parseUpgradeResponse(body) };
}
