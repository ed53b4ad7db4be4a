import { isPortcullisClientError, PortcullisClientError } from '../errors/portcullis-client-error.js';
import type { AuthApi } from '../http/auth-api.js';
import type { RefreshResult, SessionTokens } from '../http/auth-responses.js';
import type { CredentialSource } from '../realtime/connection-types.js';
import { SingleFlight } from '../util/single-flight.js';
import type { SharedRotation, TabCoordinator } from './tab-coordinator.js';
import type { TokenKeeper } from './token-keeper.js';

/**
 * How a {@link CredentialRenewer} presents a refresh token and whom it tells.
 *
 * @example
 * ```ts
 * const hooks: RenewalHooks = { inBand: (token) => conn.inBand ? conn.refreshInBand(token) : undefined };
 * ```
 */
export interface RenewalHooks {
  /** Rotates a session over an open connection, or undefined to use `POST /auth/refresh`. */
  readonly inBand?: (refreshToken: string) => Promise<SessionTokens> | undefined;
  /** Shares one refresh among the tabs of an origin (browsers). */
  readonly tabs?: TabCoordinator;
  /** Called after every rotation with the access token it replaced. */
  readonly rotated?: (result: RefreshResult, replacedAccessToken: string | undefined) => void;
}

/** Codes that mean "this token is no good" (as opposed to "the server could not be asked"). */
export const TOKEN_REFUSED = ['invalid_token', 'unauthorized'] as const;

/**
 * The login is over on the server (its tokens were refused, e.g. issued before the
 * store epoch of a server whose store lost its data): `not_authenticated`, status 401,
 * the refusal as `cause`.
 */
/** A rotation that went through JSON (another tab) has its expirations as text: dates again. */
export function revived(rotation: SharedRotation): RefreshResult {
  if (rotation.kind === 'login') return rotation as RefreshResult;
  const tokens = rotation.tokens as SessionTokens;
  return { kind: 'session', tokens: { ...tokens, accessExpiration: new Date(tokens.accessExpiration), refreshExpiration: new Date(tokens.refreshExpiration) } };
}

function loginGone(what: string, refusal: PortcullisClientError): PortcullisClientError {
  return new PortcullisClientError('not_authenticated', `${what}: the login is gone; log in again`, { status: 401, cause: refusal });
}

/**
 * Renews a client's tokens, each kind single-flight: a session through its
 * refresh token, else a re-upgrade; a JWT through its refresh token, else the
 * `reauthenticate` hook. `PortcullisClient` exposes it; it is its own file so
 * the renewal order can be read in one place.
 *
 * @example
 * ```ts
 * const renewer = new CredentialRenewer(api, keeper, async () => api.loginWithUsername(u, p));
 * const token = await renewer.credential('session'); // refreshes or upgrades if needed
 * ```
 */
export class CredentialRenewer implements CredentialSource {
  readonly #flight = new SingleFlight<string>();

  constructor(
    private readonly api: AuthApi,
    private readonly keeper: TokenKeeper,
    private readonly reauthenticate: (() => Promise<unknown>) | undefined,
    private readonly hooks: RenewalHooks = {},
  ) {}

  refresh(kind: 'session' | 'login'): Promise<RefreshResult> {
    return this.#flight.run(`refresh:${kind}`, async () => {
      const held = this.keeper.held;
      const token = kind === 'session' ? held.session?.refreshToken : held.login?.refreshToken;
      if (token === undefined) throw new PortcullisClientError('not_authenticated', `no ${kind} refresh token is held`);
      const replaced = kind === 'session' ? held.session?.accessToken : held.login?.accessToken;
      let result: RefreshResult;
      try {
        result = await this.#present(kind, token);
      } catch (error) {
        if (isPortcullisClientError(error, ...TOKEN_REFUSED)) this.#forget(kind, token);
        throw error;
      }
      this.adopt(result, replaced);
      return result;
    });
  }

  /** Keeps a rotation (made here or in another tab) and tells the hooks. */
  adopt(result: RefreshResult, replacedAccessToken: string | undefined): void {
    if (result.kind === 'session') this.keeper.setSession(result.tokens);
    else this.keeper.setLogin(result.tokens);
    this.hooks.rotated?.(result, replacedAccessToken);
  }

  /** Presents a refresh token once: in band when a connection can, else over HTTP; once for all tabs. */
  async #present(kind: 'session' | 'login', token: string): Promise<RefreshResult> {
    const run = async (): Promise<SharedRotation> => {
      const inBand = kind === 'session' ? this.hooks.inBand?.(token) : undefined;
      return inBand === undefined ? this.api.refresh(token) : { kind: 'session', tokens: await inBand };
    };
    const tabs = this.hooks.tabs;
    return revived(tabs === undefined ? await run() : await tabs.refresh(token, run));
  }

  /**
   * Upgrades the held JWT. When the server refuses a JWT that was merely held (it
   * predates the server's store epoch, or was upgraded or logged out elsewhere), the
   * JWT is renewed once — refresh, else `reauthenticate` — and upgraded again; a
   * refused fresh JWT ends in `not_authenticated`.
   */
  upgrade(): Promise<SessionTokens> {
    return this.#flight.run('upgrade', async () => {
      const held = this.keeper.usableJwt();
      const first = await this.#upgradeWith(held ?? (await this.#renewJwt()));
      if (!(first instanceof PortcullisClientError)) return first;
      if (held === undefined) throw loginGone('the server refused the renewed JWT', first);
      const second = await this.#upgradeWith(await this.#renewJwt());
      if (!(second instanceof PortcullisClientError)) return second;
      throw loginGone('the server refused the renewed JWT', second);
    });
  }

  /** The session pair, or the server's refusal of `jwt` (which is then dropped). */
  async #upgradeWith(jwt: string): Promise<SessionTokens | PortcullisClientError> {
    let session: SessionTokens;
    try {
      session = await this.api.upgrade(jwt);
    } catch (error) {
      if (!isPortcullisClientError(error, ...TOKEN_REFUSED)) throw error;
      this.keeper.dropJwtAccess(jwt);
      return error;
    }
    this.keeper.dropJwtAccess(jwt);
    this.keeper.setSession(session);
    return session;
  }

  async credential(kind: 'session' | 'jwt'): Promise<string> {
    return this.peekCredential(kind) ?? (kind === 'session' ? this.#renewSession() : this.#renewJwt());
  }

  async renewCredential(kind: 'session' | 'jwt', refused: string): Promise<string> {
    const current = this.peekCredential(kind);
    if (current !== undefined && current !== refused) return current;
    if (kind === 'session') return this.#renewSession();
    this.keeper.dropJwtAccess(refused);
    return this.#renewJwt();
  }

  peekCredential(kind: 'session' | 'jwt'): string | undefined {
    return kind === 'session' ? this.keeper.usableSession() : this.keeper.usableJwt();
  }

  #renewSession(): Promise<string> {
    return this.#flight.run('renew:session', async () => {
      if (this.keeper.usableSessionRefresh() !== undefined) {
        const renewed = await this.#tryRefresh('session');
        if (renewed?.kind === 'session') return renewed.tokens.accessToken;
      }
      this.keeper.setSession(undefined);
      return (await this.upgrade()).accessToken;
    });
  }

  /**
   * A new JWT: through the JWT refresh token, else (none held, or the server refused
   * it, e.g. after its store lost its data) through `reauthenticate`, called once;
   * else `not_authenticated`. A refused refresh token is forgotten by {@link refresh}.
   */
  #renewJwt(): Promise<string> {
    return this.#flight.run('renew:jwt', async () => {
      let refusal: PortcullisClientError | undefined;
      if (this.keeper.usableJwtRefresh() !== undefined) {
        try {
          const renewed = await this.refresh('login');
          if (renewed.kind === 'login') return renewed.tokens.accessToken;
        } catch (error) {
          if (!isPortcullisClientError(error, ...TOKEN_REFUSED)) throw error;
          refusal = error;
        }
      }
      if (this.reauthenticate !== undefined) {
        await this.reauthenticate();
        const token = this.keeper.usableJwt();
        if (token !== undefined) return token;
        throw new PortcullisClientError('not_authenticated', 'reauthenticate did not log in; log in again', refusal ? { status: 401, cause: refusal } : {});
      }
      if (refusal !== undefined) throw loginGone('the server refused the refresh token', refusal);
      throw new PortcullisClientError('not_authenticated', 'no usable token is held; log in again');
    });
  }

  async #tryRefresh(kind: 'session' | 'login'): Promise<RefreshResult | undefined> {
    try {
      return await this.refresh(kind);
    } catch (error) {
      if (isPortcullisClientError(error, ...TOKEN_REFUSED)) return undefined;
      throw error;
    }
  }

  #forget(kind: 'session' | 'login', refreshToken: string): void {
    const held = this.keeper.held;
    if (kind === 'session' && held.session?.refreshToken === refreshToken) this.keeper.setSession(undefined);
    if (kind === 'login' && held.login?.refreshToken === refreshToken) this.keeper.setLogin(undefined);
  }
}
