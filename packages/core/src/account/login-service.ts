/**
 * The login service: signup and password login over the account store,
 * the password hasher, the lockout counters and the captcha verifier.
 */
import 'reflect-metadata';
import { inject, injectable } from 'tsyringe';
import type { PortcullisConfig } from '../contracts/portcullis-config.js';
import { PORTCULLIS_CONFIG } from '../contracts/injection-tokens.js';
import { PortcullisError } from '../errors/portcullis-error.js';
import { CAPTCHA_VERIFIER, type CaptchaVerifier } from '../captcha/captcha-verifier.js';
import { PasswordHasher } from '../password/password-hasher.js';
import { LockoutStore } from '../store/lockout-store.js';
import { checkCaptchaToken, checkEmail, checkLoginName, checkPassword, checkUsername } from './account-input.js';
import { ACCOUNT_STORE, type Account, type AccountStore } from './account-store.js';
import { LockedOutError } from './login-errors.js';

/**
 * A signup: the fields of the signup request (docs/http-api.md).
 *
 * @example
 * ```ts
 * const account = await logins.signup({ email, username, password } satisfies SignupRequest);
 * ```
 */
export interface SignupRequest {
  readonly email: string;
  readonly username: string;
  readonly password: string;
  /** Required when captcha is on. */
  readonly captchaToken?: string;
}

/**
 * A password login by email or by username.
 *
 * @example
 * ```ts
 * const login: PasswordLogin = { username: 'ada', password };
 * ```
 */
export type PasswordLogin =
  | { readonly email: string; readonly password: string; readonly captchaToken?: string }
  | { readonly username: string; readonly password: string; readonly captchaToken?: string };

/**
 * Where a request came from, for the captcha provider.
 *
 * @example
 * ```ts
 * await logins.loginWithUsername(body, { remoteAddress: req.ip } satisfies LoginOrigin);
 * ```
 */
export interface LoginOrigin {
  readonly remoteAddress?: string;
}

const WRONG_CREDENTIALS = 'the account name or password is wrong';

/**
 * Signs accounts up and logs them in. Every input is checked at run time
 * (`invalid_request` naming the field). Login hardening:
 *
 * - a locked account name is refused first (`LockedOutError`, code `locked_out`);
 * - the captcha (when on) is checked before the password (`captcha_failed`);
 * - an unknown account and a wrong password both cost one bcrypt verification
 *   and fail with the same `invalid_credentials` error, and both count as a
 *   failure of that account name, so nothing tells them apart;
 * - a successful login clears the name's failures.
 *
 * @example
 * ```ts
 * const account = await logins.loginWithUsername({ username: 'ada', password }, { remoteAddress: ip });
 * const pair = issuer.issueLoginPair(account.storageId, { name: account.username });
 * ```
 */
@injectable()
export class LoginService {
  readonly #minLength: number;
  readonly #maxLength: number;

  constructor(
    @inject(PORTCULLIS_CONFIG) config: PortcullisConfig,
    private readonly hasher: PasswordHasher,
    @inject(ACCOUNT_STORE) private readonly accounts: AccountStore,
    private readonly lockout: LockoutStore,
    @inject(CAPTCHA_VERIFIER) private readonly captcha: CaptchaVerifier,
  ) {
    this.#minLength = config.security.password.minLength;
    this.#maxLength = config.security.password.maxLength;
  }

  /**
   * Creates an account. Concurrent signups of one username or email: exactly one wins.
   *
   * @throws PortcullisError `invalid_request`, `captcha_failed`, `conflict`, `unavailable`.
   */
  async signup(request: SignupRequest, origin: LoginOrigin = {}): Promise<Account> {
    const email = checkEmail(request?.email);
    const username = checkUsername(request?.username);
    const password = checkPassword(request?.password, this.#minLength, this.#maxLength);
    await this.#checkCaptcha(request?.captchaToken, origin);
    // Cheap early answer for the common case; create() below is the atomic check.
    if (await this.accounts.findByUsername(username)) throw new PortcullisError('conflict', 'username is taken');
    if (await this.accounts.findByEmail(email)) throw new PortcullisError('conflict', 'email is taken');
    const passwordHash = await this.hasher.hash(password);
    return this.accounts.create({ email, username, passwordHash });
  }

  /**
   * Logs in with email and password.
   *
   * @throws PortcullisError `invalid_request`, `locked_out` ({@link LockedOutError}), `captcha_failed`, `invalid_credentials`, `unavailable`.
   */
  async loginWithEmail(request: { readonly email: string; readonly password: string; readonly captchaToken?: string }, origin: LoginOrigin = {}): Promise<Account> {
    const email = checkLoginName(request?.email, 'email');
    return this.#login(email, () => this.accounts.findByEmail(email), request, origin);
  }

  /**
   * Logs in with username and password; see {@link loginWithEmail}.
   *
   * @throws PortcullisError `invalid_request`, `locked_out` ({@link LockedOutError}), `captcha_failed`, `invalid_credentials`, `unavailable`.
   */
  async loginWithUsername(request: { readonly username: string; readonly password: string; readonly captchaToken?: string }, origin: LoginOrigin = {}): Promise<Account> {
    const username = checkLoginName(request?.username, 'username');
    return this.#login(username, () => this.accounts.findByUsername(username), request, origin);
  }

  async #login(
    accountKey: string,
    find: () => Promise<Account | undefined>,
    request: { readonly password: string; readonly captchaToken?: string },
    origin: LoginOrigin,
  ): Promise<Account> {
    const password = checkPassword(request?.password, 1, this.#maxLength);
    const captchaToken = checkCaptchaToken(request?.captchaToken);
    const status = await this.lockout.isLocked(accountKey);
    if (status.locked) throw new LockedOutError(status.retryAfterSeconds);
    await this.#checkCaptcha(captchaToken, origin);
    const account = await find();
    // One bcrypt verification whether or not the account exists (a null hash costs the same).
    const matches = await this.hasher.verify(password, account?.passwordHash ?? null);
    if (!account || !matches) {
      await this.lockout.registerFailure(accountKey);
      throw new PortcullisError('invalid_credentials', WRONG_CREDENTIALS);
    }
    await this.lockout.reset(accountKey);
    return account;
  }

  async #checkCaptcha(token: unknown, origin: LoginOrigin): Promise<void> {
    if (!this.captcha.enabled) return;
    const captchaToken = checkCaptchaToken(token);
    if (!(await this.captcha.verify(captchaToken, origin.remoteAddress))) {
      throw new PortcullisError('captcha_failed', 'the captcha was not solved');
    }
  }
}
