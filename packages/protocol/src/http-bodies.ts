/**
 * The JSON bodies of the HTTP API that carry credentials or errors: the login
 * and upgrade responses and the error body, with pure readers for clients.
 */
import type { ErrorCode } from './error-codes.js';

/**
 * The login response (signup, login, refresh with a JWT refresh token): a JWT
 * access token and a JWT refresh token.
 *
 * @example
 * ```ts
 * const body: LoginResponse = { accessToken: pair.accessToken, refreshToken: pair.refreshToken };
 * ```
 */
export interface LoginResponse {
  readonly accessToken: string;
  readonly refreshToken: string;
}

/**
 * The upgrade response (and a refresh with a session refresh token): a session
 * token pair and its expirations as ISO 8601 UTC text.
 *
 * @example
 * ```ts
 * const body: UpgradeResponse = { accessToken, refreshToken, accessExpiration: at.toISOString(), refreshExpiration: until.toISOString() };
 * ```
 */
export interface UpgradeResponse extends LoginResponse {
  readonly accessExpiration: string;
  readonly refreshExpiration: string;
  /**
   * The session's UDP key, 32 bytes as base64url: the MAC key of authenticated
   * UDP datagrams (see `layUdpDatagram`). Absent from servers that do not issue one.
   */
  readonly udpKey?: string;
}

/**
 * The body of every HTTP error answer that has one.
 *
 * @example
 * ```ts
 * const body: ErrorBody = { error: 'conflict', message: 'username is taken' };
 * ```
 */
export interface ErrorBody {
  readonly error: ErrorCode;
  readonly message: string;
}

/**
 * Reads a login response; undefined unless both tokens are non-empty strings.
 *
 * @example
 * ```ts
 * const tokens = readLoginResponse(await response.json());
 * if (tokens === undefined) throw new Error('not a login response');
 * ```
 */
export function readLoginResponse(body: unknown): LoginResponse | undefined {
  const accessToken = text(body, 'accessToken');
  const refreshToken = text(body, 'refreshToken');
  return accessToken === undefined || refreshToken === undefined ? undefined : { accessToken, refreshToken };
}

/**
 * Reads an upgrade response; undefined unless both tokens are non-empty strings
 * and both expirations are dates.
 *
 * @example
 * ```ts
 * const session = readUpgradeResponse(await response.json());
 * if (session) console.log(new Date(session.accessExpiration));
 * ```
 */
export function readUpgradeResponse(body: unknown): UpgradeResponse | undefined {
  const login = readLoginResponse(body);
  const accessExpiration = date(body, 'accessExpiration');
  const refreshExpiration = date(body, 'refreshExpiration');
  if (login === undefined || accessExpiration === undefined || refreshExpiration === undefined) return undefined;
  const udpKey = text(body, 'udpKey');
  return udpKey === undefined ? { ...login, accessExpiration, refreshExpiration } : { ...login, accessExpiration, refreshExpiration, udpKey };
}

/**
 * What a refresh answered: `session` (an upgrade response, which carries
 * expirations) for a session refresh token, `login` (a login response) for a
 * JWT refresh token.
 *
 * @example
 * ```ts
 * const tokens = refreshResponseKind(body) === 'session' ? readUpgradeResponse(body) : readLoginResponse(body);
 * ```
 */
export function refreshResponseKind(body: unknown): 'login' | 'session' {
  return field(body, 'accessExpiration') === undefined ? 'login' : 'session';
}

function field(body: unknown, name: string): unknown {
  return typeof body === 'object' && body !== null ? (body as Record<string, unknown>)[name] : undefined;
}

function text(body: unknown, name: string): string | undefined {
  const value = field(body, name);
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

function date(body: unknown, name: string): string | undefined {
  const value = text(body, name);
  return value !== undefined && !Number.isNaN(new Date(value).getTime()) ? value : undefined;
}

/**
 * One login of the caller in the session inventory (`GET /auth/sessions`). `id` is
 * opaque: it names the login for `DELETE /auth/sessions/{id}` and is no token.
 *
 * @example
 * ```ts
 * const other = (await client.listSessions()).find((s: SessionSummary) => !s.current);
 * ```
 */
export interface SessionSummary {
  readonly id: string;
  /** ISO 8601 UTC: when the login was made. */
  readonly createdAt: string;
  /** ISO 8601 UTC: its last refresh (or the login itself). */
  readonly refreshedAt: string;
  /** The client address of the login, when known. */
  readonly ip: string | null;
  readonly userAgent: string | null;
  /** True once the login was upgraded to a session. */
  readonly upgraded: boolean;
  /** True for the login of the token that asked. */
  readonly current: boolean;
}

/**
 * The body of `GET /auth/sessions`: the caller's live logins, newest first.
 *
 * @example
 * ```ts
 * const body: SessionsResponse = { sessions: [] };
 * ```
 */
export interface SessionsResponse {
  readonly sessions: readonly SessionSummary[];
}

/**
 * Reads a session inventory; undefined unless it has the shape of {@link SessionsResponse}.
 *
 * @example
 * ```ts
 * const inventory = readSessionsResponse(await response.json());
 * inventory?.sessions.forEach((s) => console.log(s.id, s.userAgent, s.current));
 * ```
 */
export function readSessionsResponse(body: unknown): SessionsResponse | undefined {
  const sessions = field(body, 'sessions');
  if (!Array.isArray(sessions)) return undefined;
  const read: SessionSummary[] = [];
  for (const entry of sessions) {
    const id = text(entry, 'id');
    const createdAt = date(entry, 'createdAt');
    const refreshedAt = date(entry, 'refreshedAt');
    const upgraded = field(entry, 'upgraded');
    const current = field(entry, 'current');
    if (id === undefined || createdAt === undefined || refreshedAt === undefined || typeof upgraded !== 'boolean' || typeof current !== 'boolean') return undefined;
    read.push({ id, createdAt, refreshedAt, ip: nullableText(entry, 'ip'), userAgent: nullableText(entry, 'userAgent'), upgraded, current });
  }
  return { sessions: read };
}

function nullableText(body: unknown, name: string): string | null {
  const value = field(body, name);
  return typeof value === 'string' ? value : null;
}
