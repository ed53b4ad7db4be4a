import { isPortcullisClientError, PortcullisClientError } from '../errors/portcullis-client-error.js';
import { AuthApi, type FetchLike, type LoginOptions, type SignupInput } from '../http/auth-api.js';
import type { LoginTokens, RefreshResult, SessionTokens } from '../http/auth-responses.js';
import type { BackoffOptions } from '../realtime/backoff.js';
import type { CredentialKind, CredentialSource } from '../realtime/connection-types.js';
import { RealtimeConnection } from '../realtime/realtime-connection.js';
import type { RealtimeTransport } from '../realtime/realtime-transport.js';
import { webSocketTransport } from '../realtime/web-socket-transport.js';
import type { SessionSummary } from '@portcullis/protocol';
import { CredentialRenewer, revived, TOKEN_REFUSED } from '../tokens/credential-renewer.js';
import { browserTabCoordinator, type TabCoordinator } from '../tokens/tab-coordinator.js';
import { jwtExpiresAt } from '../tokens/jwt-expiry.js';
import { TokenKeeper, type HeldTokens } from '../tokens/token-keeper.js';

const jwtExpiry = (token: string): number => jwtExpiresAt(token) ?? Number.NaN;

/**
 * Options of {@link PortcullisClient}.
 *
 * @example
 * ```ts
 * const client = new PortcullisClient({ baseUrl: 'https://game.example.com', tokens: JSON.parse(localStorage.tokens ?? 'null') ?? undefined });
 * ```
 */
export interface PortcullisClientOptions {
  /** The server's HTTP address; default in browsers: the page's origin. */
  readonly baseUrl?: string;
  /** Replaces `globalThis.fetch`. */
  readonly fetch?: FetchLike;
  /** Tokens to start with, e.g. restored from storage (see `onTokens`). */
  readonly tokens?: HeldTokens;
  /**
   * Called (once per renewal) when every refresh token is used up or refused — for
   * example the server's store lost its data (an in-memory store restarted), which
   * voids every token issued before: log in again here, e.g. by asking the user.
   * Renewal then carries on with the new login. Without it such a client fails with
   * `not_authenticated` (status 401 when the server refused the tokens).
   */
  readonly reauthenticate?: (client: PortcullisClient) => Promise<unknown>;
  /** The clock, in ms since the epoch (Date.now). */
  readonly now?: () => number;
  /** Tokens are renewed this long before their known expiry (5,000 ms). */
  readonly expirySkewMs?: number;
  /**
   * In a browser, tabs of one origin share each refresh (Web Locks, else a
   * BroadcastChannel; the answer committed to IndexedDB before the lock is released),
   * so no refresh token is presented twice. Default true; it does nothing outside a browser.
   */
  readonly shareRefreshAcrossTabs?: boolean;
}

/**
 * Options of {@link PortcullisClient.connect}.
 *
 * @example
 * ```ts
 * const conn = await client.connect({ credential: 'jwt', requestTimeoutMs: 2000, reconnect: { maxAttempts: 5 } });
 * ```
 */
export interface ConnectOptions {
  /** Default: `webSocketTransport()` at `<baseUrl>/ws`. */
  readonly transport?: RealtimeTransport;
  /** Which credential the connection carries (`session`; upgrading first when needed). */
  readonly credential?: CredentialKind;
  readonly requestTimeoutMs?: number;
  readonly handshakeTimeoutMs?: number;
  /** Reconnect spacing, or `false` to close on the first drop. */
  readonly reconnect?: Partial<BackoffOptions> | false;
  /** `wait` (default): back off a gate that answered `rate_limited` and send again; `reject`: reject at once. */
  readonly rateLimited?: 'wait' | 'reject';
}

function defaultBaseUrl(): string {
  const origin = (globalThis as { location?: { origin?: string } }).location?.origin;
  if (origin === undefined) throw new PortcullisClientError('invalid_request', 'baseUrl is required outside a browser page');
  return origin;
}

/**
 * The portcullis client: signs up and logs in over HTTP, keeps the tokens,
 * upgrades to a session token and opens real-time connections. Refreshes are
 * single-flight (twenty callers that need one send one `POST /auth/refresh`, so
 * the rotation is never burnt), and tokens travel only in headers and bodies.
 *
 * @example
 * ```ts
 * const client = new PortcullisClient({ baseUrl: 'http://127.0.0.1:3000' });
 * await client.loginWithUsername('alice', 'correct horse');
 * const conn = await client.connect();            // upgrades, then WebSocket /ws
 * const pos = await conn.request('/game', 'move', { x: 1, y: 2 });
 * await client.logout();
 * ```
 */
export class PortcullisClient implements CredentialSource {
  readonly api: AuthApi;
  readonly #keeper: TokenKeeper;
  readonly #renewer: CredentialRenewer;
  readonly #connections = new Set<RealtimeConnection>();
  readonly #now: () => number;
  readonly #skewMs: number;
  #renewal: ReturnType<typeof setTimeout> | undefined;

  constructor(options: PortcullisClientOptions = {}) {
    this.api = new AuthApi(options.baseUrl ?? defaultBaseUrl(), options.fetch);
    this.#now = options.now ?? Date.now;
    this.#skewMs = options.expirySkewMs ?? 5_000;
    this.#keeper = new TokenKeeper(this.#now, this.#skewMs, options.tokens);
    const reauthenticate = options.reauthenticate;
    const tabs = options.shareRefreshAcrossTabs === false ? undefined : browserTabCoordinator(this.api.baseUrl);
    this.#renewer = new CredentialRenewer(this.api, this.#keeper, reauthenticate && (() => reauthenticate(this)), {
      inBand: (token) => this.#inBandRefresh(token),
      tabs,
      rotated: (result, replaced) => this.#rotated(result, replaced),
    });
    if (tabs !== undefined) this.#followOtherTabs(tabs);
    this.#keeper.onChange(() => this.#scheduleRenewal());
  }

  /** The tokens held now (a frozen snapshot). */
  get tokens(): HeldTokens {
    return this.#keeper.held;
  }

  /** Calls `listener` with the new snapshot on every change, e.g. to persist it. */
  onTokens(listener: (tokens: HeldTokens) => void): () => void {
    return this.#keeper.onChange(listener);
  }

  /** Creates an account (`POST /auth/signup`) and keeps its login pair. */
  async signup(input: SignupInput): Promise<LoginTokens> {
    return this.#loggedIn(await this.api.signup(input));
  }

  /** `POST /auth/login/unamepwd`; keeps the pair and forgets any earlier session. */
  async loginWithUsername(username: string, password: string, options?: LoginOptions): Promise<LoginTokens> {
    return this.#loggedIn(await this.api.loginWithUsername(username, password, options));
  }

  /** `POST /auth/login/emailpwd`; keeps the pair and forgets any earlier session. */
  async loginWithEmail(email: string, password: string, options?: LoginOptions): Promise<LoginTokens> {
    return this.#loggedIn(await this.api.loginWithEmail(email, password, options));
  }

  /**
   * `POST /auth/refresh` with the session refresh token (when a session is held)
   * or the JWT refresh token. Single-flight per kind: concurrent calls share one request.
   */
  refresh(kind: 'session' | 'login' = this.#keeper.held.session ? 'session' : 'login'): Promise<RefreshResult> {
    return this.#renewer.refresh(kind);
  }

  /** Upgrades the held JWT (refreshing it first if needed) to a session pair, which it keeps. */
  upgrade(): Promise<SessionTokens> {
    return this.#renewer.upgrade();
  }

  /**
   * Ends the login: closes this client's connections, revokes the session pair
   * and the JWT family on the server, and forgets every token. The tokens are
   * forgotten even when the server cannot be reached (the error is rethrown).
   */
  async logout(): Promise<void> {
    for (const connection of [...this.#connections]) connection.close();
    clearTimeout(this.#renewal);
    const session = this.#keeper.held.session?.accessToken;
    let jwt: string | undefined;
    try {
      jwt = this.#keeper.usableJwt() ?? (this.#keeper.usableJwtRefresh() ? (await this.refresh('login')).tokens.accessToken : undefined);
    } catch (error) {
      if (!isPortcullisClientError(error, ...TOKEN_REFUSED)) throw error;
    } finally {
      this.#keeper.clear();
    }
    for (const bearer of [session, jwt]) {
      if (bearer === undefined) continue;
      try {
        await this.api.logout(bearer);
      } catch (error) {
        if (!isPortcullisClientError(error, ...TOKEN_REFUSED)) throw error;
      }
    }
  }

  /**
   * `fetch` against the server with the JWT as bearer, refreshed first when
   * expired and once more on a 401. Give a body that can be sent twice (a string).
   */
  async authorizedFetch(path: string, init?: RequestInit): Promise<Response> {
    const token = await this.credential('jwt');
    const response = await this.api.send(path, init, token);
    if (response.status !== 401) return response;
    return this.api.send(path, init, await this.renewCredential('jwt', token));
  }

  /** Opens a real-time connection (WebSocket by default) and resolves once it is authenticated. */
  async connect(options: ConnectOptions = {}): Promise<RealtimeConnection> {
    const connection = new RealtimeConnection({
      transport: options.transport ?? webSocketTransport(),
      credentials: this,
      credential: options.credential ?? 'session',
      baseUrl: this.api.baseUrl,
      ...(options.requestTimeoutMs === undefined ? {} : { requestTimeoutMs: options.requestTimeoutMs }),
      ...(options.handshakeTimeoutMs === undefined ? {} : { handshakeTimeoutMs: options.handshakeTimeoutMs }),
      ...(options.reconnect === undefined ? {} : { reconnect: options.reconnect }),
      ...(options.rateLimited === undefined ? {} : { rateLimited: options.rateLimited }),
    });
    this.#connections.add(connection);
    connection.on('close', () => {
      this.#connections.delete(connection);
      this.#scheduleRenewal();
    });
    await connection.open();
    this.#scheduleRenewal();
    return connection;
  }

  /**
   * `GET /auth/sessions`: this account's live logins, newest first, this client's own
   * marked `current`.
   *
   * @example
   * ```ts
   * for (const s of await client.listSessions()) console.log(s.userAgent, s.ip, s.current ? '(this device)' : '');
   * ```
   */
  async listSessions(): Promise<readonly SessionSummary[]> {
    return this.api.listSessions(await this.#bearer());
  }

  /**
   * `DELETE /auth/sessions/{id}`: ends one login of this account everywhere (its tokens
   * and sockets); `not_found` when the id is not one of this account's.
   *
   * @example
   * ```ts
   * await client.endSession(stolen.id);
   * ```
   */
  async endSession(id: string): Promise<void> {
    await this.api.endSessions(await this.#bearer(), id);
  }

  /**
   * `DELETE /auth/sessions`: ends every login of this account except this client's.
   *
   * @example
   * ```ts
   * await client.endOtherSessions(); // "log out everywhere else"
   * ```
   */
  async endOtherSessions(): Promise<void> {
    await this.api.endSessions(await this.#bearer());
  }

  /** The session access token when a session is held, else the JWT (renewed if needed). */
  async #bearer(): Promise<string> {
    return this.#keeper.held.session !== undefined ? this.credential('session') : this.credential('jwt');
  }

  /** A session refresh goes in band over an open connection that holds the session, when there is one. */
  #inBandRefresh(refreshToken: string): Promise<SessionTokens> | undefined {
    const access = this.#keeper.held.session?.accessToken;
    for (const connection of this.#connections) {
      if (connection.inBand && connection.credentialToken === access) return connection.refreshInBand(refreshToken);
    }
    return undefined;
  }

  /** A rotation moved this client's connections on the server: session ones follow, JWT ones take the new JWT in band. */
  #rotated(result: RefreshResult, replaced: string | undefined): void {
    for (const connection of this.#connections) {
      if (result.kind === 'session') {
        if (replaced !== undefined) connection.adopt(replaced, result.tokens.accessToken);
      } else if (connection.inBand && connection.credentialToken === replaced) {
        connection.reauthenticate(result.tokens.accessToken).catch(() => undefined);
      }
    }
  }

  /** Another tab rotated the tokens this tab holds: take its answer. */
  #followOtherTabs(tabs: TabCoordinator): void {
    tabs.onRotation(async (open) => {
      const held = this.#keeper.held;
      for (const token of [held.session?.refreshToken, held.login?.refreshToken]) {
        if (token === undefined) continue;
        const rotation = await open(token);
        if (rotation === undefined) continue;
        const result = revived(rotation);
        this.#renewer.adopt(result, result.kind === 'session' ? held.session?.accessToken : held.login?.accessToken);
      }
    });
  }

  /**
   * While connections are open, their credential is renewed ahead of its expiry (in band
   * where it can be), so a long match never sees it expire.
   */
  #scheduleRenewal(): void {
    clearTimeout(this.#renewal);
    this.#renewal = undefined;
    const kinds = new Set([...this.#connections].map((c) => c.credentialKind));
    const held = this.#keeper.held;
    const due = [
      kinds.has('session') && held.session ? { kind: 'session' as const, at: held.session.accessExpiration.getTime() } : undefined,
      kinds.has('jwt') && held.login?.accessToken ? { kind: 'login' as const, at: jwtExpiry(held.login.accessToken) } : undefined,
    ].filter((d): d is { kind: 'session' | 'login'; at: number } => d !== undefined && Number.isFinite(d.at));
    if (due.length === 0) return;
    const next = due.reduce((a, b) => (a.at <= b.at ? a : b));
    const lifetime = next.at - this.#now();
    // Already expired by this client's clock (or its clock runs ahead): requests renew it when they need it.
    if (lifetime <= this.#skewMs) return;
    const delay = Math.max(0, lifetime - Math.min(2 * this.#skewMs, lifetime / 3));
    this.#renewal = setTimeout(() => {
      this.#renewal = undefined;
      this.refresh(next.kind).catch(() => this.#scheduleRenewal());
    }, delay);
    (this.#renewal as { unref?: () => void }).unref?.();
  }

  /** A usable credential of `kind`, renewed first (refresh, upgrade, `reauthenticate`) when expired. */
  credential(kind: 'session' | 'jwt'): Promise<string> {
    return this.#renewer.credential(kind);
  }

  /** A new credential after the server refused `refused`; no renewal when it was already replaced. */
  renewCredential(kind: 'session' | 'jwt', refused: string): Promise<string> {
    return this.#renewer.renewCredential(kind, refused);
  }

  /** The credential of `kind` held now, if still usable by the clock. */
  peekCredential(kind: 'session' | 'jwt'): string | undefined {
    return this.#renewer.peekCredential(kind);
  }

  /** The UDP key the server issued with this session access token, while the client holds that session. */
  udpKeyOf(accessToken: string): string | undefined {
    const session = this.#keeper.held.session;
    return session?.accessToken === accessToken ? session.udpKey : undefined;
  }

  #loggedIn(tokens: LoginTokens): LoginTokens {
    this.#keeper.setSession(undefined);
    this.#keeper.setLogin(tokens);
    return tokens;
  }
}
