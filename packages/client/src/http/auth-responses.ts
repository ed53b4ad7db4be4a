import { readLoginResponse, readUpgradeResponse, refreshResponseKind, type LoginResponse } from '@portcullis/protocol';
import { PortcullisClientError } from '../errors/portcullis-client-error.js';

/**
 * The login response: a JWT access token and a JWT refresh token (the protocol's
 * `LoginResponse`).
 *
 * @example
 * ```ts
 * const { accessToken } = await client.loginWithUsername('alice', 'pw');
 * ```
 */
export type LoginTokens = LoginResponse;

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
  /** The session's UDP key (base64url), which the UDP transport authenticates datagrams with; absent when the server issues none. */
  readonly udpKey?: string;
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

/**
 * Reads a login response body.
 *
 * @example
 * ```ts
 * const tokens = parseLoginResponse(await res.json());
 * ```
 */
export function parseLoginResponse(body: unknown): LoginTokens {
  const tokens = readLoginResponse(body);
  if (tokens === undefined) throw malformed('login response');
  return { accessToken: tokens.accessToken, refreshToken: tokens.refreshToken };
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
  const session = readUpgradeResponse(body);
  if (session === undefined) throw malformed('upgrade response');
  const tokens = {
    accessToken: session.accessToken,
    refreshToken: session.refreshToken,
    accessExpiration: new Date(session.accessExpiration),
    refreshExpiration: new Date(session.refreshExpiration),
  };
  return session.udpKey === undefined ? tokens : { ...tokens, udpKey: session.udpKey };
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
  return refreshResponseKind(body) === 'login'
    ? { kind: 'login', tokens: parseLoginResponse(body) }
    : { kind: 'session', tokens: parseUpgradeResponse(body) };
}
