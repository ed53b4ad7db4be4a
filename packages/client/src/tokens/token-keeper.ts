import type { LoginTokens, SessionTokens } from '../http/auth-responses.js';
import { Emitter } from '../util/emitter.js';
import { jwtExpiresAt } from './jwt-expiry.js';

/**
 * The tokens a client holds. `login.accessToken` is absent once it was upgraded
 * (the server invalidated it); the JWT refresh token stays usable.
 *
 * @example
 * ```ts
 * localStorage.setItem('tokens', JSON.stringify(client.tokens));
 * ```
 */
export interface HeldTokens {
  readonly login?: { readonly accessToken?: string; readonly refreshToken: string };
  readonly session?: SessionTokens;
}

/** Accepts expirations that went through JSON (ISO strings) as well as `Date`s. */
function restored(tokens: HeldTokens): HeldTokens {
  const session = tokens.session;
  if (session === undefined) return { ...tokens };
  return {
    ...tokens,
    session: { ...session, accessExpiration: new Date(session.accessExpiration), refreshExpiration: new Date(session.refreshExpiration) },
  };
}

/**
 * Holds the tokens of one client, answers whether each is still usable by the
 * client's clock, and tells listeners about every change.
 *
 * @example
 * ```ts
 * const keeper = new TokenKeeper(() => Date.now(), 5_000);
 * keeper.setLogin({ accessToken, refreshToken });
 * keeper.usableJwt(); // accessToken until 5 s before its exp
 * ```
 */
export class TokenKeeper {
  #held: HeldTokens = {};
  readonly #changes = new Emitter<{ change: HeldTokens }>();

  constructor(
    private readonly now: () => number,
    private readonly skewMs: number,
    initial: HeldTokens = {},
  ) {
    this.#held = Object.freeze(restored(initial));
  }

  get held(): HeldTokens {
    return this.#held;
  }

  onChange(listener: (tokens: HeldTokens) => void): () => void {
    return this.#changes.on('change', listener);
  }

  setLogin(tokens: LoginTokens | undefined): void {
    this.#set({ ...this.#held, login: tokens });
  }

  /** The JWT access token was upgraded (or refused): keep only its refresh token. */
  dropJwtAccess(token: string): void {
    const login = this.#held.login;
    if (login?.accessToken === token) this.#set({ ...this.#held, login: { refreshToken: login.refreshToken } });
  }

  setSession(tokens: SessionTokens | undefined): void {
    this.#set({ ...this.#held, session: tokens });
  }

  clear(): void {
    this.#set({});
  }

  /** The JWT access token, unless absent or past its `exp` (minus the skew). */
  usableJwt(): string | undefined {
    const token = this.#held.login?.accessToken;
    return token !== undefined && !this.#expired(jwtExpiresAt(token)) ? token : undefined;
  }

  /** The JWT refresh token, unless absent or past its `exp`. */
  usableJwtRefresh(): string | undefined {
    const token = this.#held.login?.refreshToken;
    return token !== undefined && !this.#expired(jwtExpiresAt(token)) ? token : undefined;
  }

  /** The session access token, unless absent or past `accessExpiration` (minus the skew). */
  usableSession(): string | undefined {
    const session = this.#held.session;
    return session !== undefined && !this.#expired(session.accessExpiration.getTime()) ? session.accessToken : undefined;
  }

  /** The session refresh token, unless absent or past `refreshExpiration`. */
  usableSessionRefresh(): string | undefined {
    const session = this.#held.session;
    return session !== undefined && !this.#expired(session.refreshExpiration.getTime()) ? session.refreshToken : undefined;
  }

  #expired(atMs: number | undefined): boolean {
    return atMs !== undefined && this.now() >= atMs - this.skewMs;
  }

  #set(next: HeldTokens): void {
    this.#held = Object.freeze({ ...next });
    this.#changes.emit('change', this.#held);
  }
}
