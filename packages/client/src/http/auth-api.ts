import { PortcullisClientError } from '../errors/portcullis-client-error.js';
import {
  parseLoginResponse, parseRefreshResponse, parseUpgradeResponse,
  type LoginTokens, type RefreshResult, type SessionTokens,
} from './auth-responses.js';
import { errorFromResponse } from './error-from-response.js';
import { readSessionsResponse, type SessionSummary } from '@portcullis/protocol';

/**
 * The fetch function the client uses; `globalThis.fetch` by default.
 *
 * @example
 * ```ts
 * const client = new PortcullisClient({ baseUrl, fetch: ((input, init) => fetch(input, { ...init, keepalive: true })) satisfies FetchLike });
 * ```
 */
export type FetchLike = (input: string, init?: RequestInit) => Promise<Response>;

/**
 * What `POST /auth/signup` takes.
 *
 * @example
 * ```ts
 * await client.signup({ email: 'alice@example.com', username: 'alice', password } satisfies SignupInput);
 * ```
 */
export interface SignupInput {
  readonly email: string;
  readonly username: string;
  readonly password: string;
  /** Required when the server has captcha turned on. */
  readonly captchaToken?: string;
}

/**
 * Options of the login calls.
 *
 * @example
 * ```ts
 * await client.loginWithUsername('alice', password, { captchaToken } satisfies LoginOptions);
 * ```
 */
export interface LoginOptions {
  /** Required when the server has captcha turned on. */
  readonly captchaToken?: string;
}

/**
 * The `/auth` routes as plain, stateless calls: no token is kept. Tokens travel
 * only in headers and JSON bodies, never in a URL. `PortcullisClient` builds on it.
 *
 * @example
 * ```ts
 * const api = new AuthApi('https://game.example.com');
 * const login = await api.loginWithUsername('alice', 'correct horse');
 * const session = await api.upgrade(login.accessToken);
 * ```
 */
export class AuthApi {
  readonly baseUrl: string;
  readonly #fetch: FetchLike;

  constructor(baseUrl: string, fetchImpl?: FetchLike) {
    this.baseUrl = baseUrl;
    this.#fetch = fetchImpl ?? ((input, init) => globalThis.fetch(input, init));
  }

  /** `POST /auth/signup`; answers the login pair of the new account. */
  async signup(input: SignupInput): Promise<LoginTokens> {
    return parseLoginResponse(await this.#json('/auth/signup', input));
  }

  /** `POST /auth/login/unamepwd`. */
  async loginWithUsername(username: string, password: string, options: LoginOptions = {}): Promise<LoginTokens> {
    return parseLoginResponse(await this.#json('/auth/login/unamepwd', { username, password, ...options }));
  }

  /** `POST /auth/login/emailpwd`. */
  async loginWithEmail(email: string, password: string, options: LoginOptions = {}): Promise<LoginTokens> {
    return parseLoginResponse(await this.#json('/auth/login/emailpwd', { email, password, ...options }));
  }

  /** `POST /auth/refresh`; the presented refresh token is used up. */
  async refresh(refreshToken: string): Promise<RefreshResult> {
    return parseRefreshResponse(await this.#json('/auth/refresh', { refreshToken }));
  }

  /** `POST /auth/upgrade`; the JWT is invalid afterwards. */
  async upgrade(jwtAccessToken: string): Promise<SessionTokens> {
    return parseUpgradeResponse(await this.#json('/auth/upgrade', { token: jwtAccessToken }, jwtAccessToken));
  }

  /** `POST /auth/logout` with a session token or a JWT as bearer. */
  async logout(bearer: string): Promise<void> {
    const response = await this.send('/auth/logout', { method: 'POST' }, bearer);
    if (!response.ok) throw await errorFromResponse(response);
  }

  /** `GET /auth/sessions`: the caller's live logins, newest first. */
  async listSessions(bearer: string): Promise<readonly SessionSummary[]> {
    const response = await this.send('/auth/sessions', { method: 'GET' }, bearer);
    if (!response.ok) throw await errorFromResponse(response);
    const inventory = readSessionsResponse(await response.json().catch(() => undefined));
    if (inventory === undefined) throw new PortcullisClientError('unexpected_response', '/auth/sessions answered a body that is not a session list', { status: response.status });
    return inventory.sessions;
  }

  /** `DELETE /auth/sessions/{id}` (one login), or `DELETE /auth/sessions` (every other login) without an id. */
  async endSessions(bearer: string, id?: string): Promise<void> {
    const path = id === undefined ? '/auth/sessions' : `/auth/sessions/${encodeURIComponent(id)}`;
    const response = await this.send(path, { method: 'DELETE' }, bearer);
    if (!response.ok) throw await errorFromResponse(response);
  }

  /**
   * Sends any request to the server, with `Authorization: Bearer` when a token is
   * given. Network failures become `network_error`; HTTP failures are returned.
   */
  async send(path: string, init: RequestInit = {}, bearer?: string): Promise<Response> {
    const headers = new Headers(init.headers);
    if (bearer !== undefined) headers.set('authorization', `Bearer ${bearer}`);
    try {
      return await this.#fetch(new URL(path, this.baseUrl).toString(), { ...init, headers });
    } catch (cause) {
      throw new PortcullisClientError('network_error', `could not reach ${this.baseUrl}`, { cause });
    }
  }

  async #json(path: string, body: unknown, bearer?: string): Promise<unknown> {
    const response = await this.send(
      path,
      { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) },
      bearer,
    );
    if (!response.ok) throw await errorFromResponse(response);
    try {
      return await response.json();
    } catch (cause) {
      throw new PortcullisClientError('unexpected_response', `${path} answered a body that is not JSON`, { status: response.status, cause });
    }
  }
}
