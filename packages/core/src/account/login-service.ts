/**
 * The login service: signup and password login over the account store,
 * the password hasher, the lockout counters and the captcha verifier.
 */
import 'reflect-metadata';
import { inject, injectable } from 'tsyringe';
import type { PortcullisConfig } from '../contracts/portcullis-config.js';
import { LOGGER_FACTORY, PORTCULLIS_CONFIG } from '../contracts/injection-tokens.js';
import type { LoggerFactory } from '../contracts/logger.js';
import { OverloadedError, PortcullisError } from '../errors/portcullis-error.js';
import { consoleLoggerFactory } from '../logging/logger.js';
import { ThrottledLog } from '../logging/throttled-log.js';
import { CAPTCHA_VERIFIER, type CaptchaVerifier } from '../captcha/captcha-verifier.js';
import { PasswordHasher } from '../password/password-hasher.js';
import { LockoutStore } from '../store/lockout-store.js';
import { BCRYPT_MAX_BYTES, checkCaptchaToken, checkEmail, checkLoginName, checkPassword, checkUsername } from './account-input.js';
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
 * (`invalid_request` naming the field). Hardening, all decided before any bcrypt work:
 *
 * - a request that would wait more than `password:max-wait-seconds` for bcrypt behind
 *   the logins and signups already under way is refused at once with `overloaded`
 *   ({@link OverloadedError}, HTTP 503 with `Retry-After`), before anything is counted,
 *   so a login storm gets fast answers instead of a queue that outlives its clients;
 * - each attempt is counted against the client address first: beyond
 *   `lockout:ip-max-failures` failed logins and refused signups in the window, the address
 *   gets `LockedOutError` (code `locked_out`); a success gives its count back;
 * - the captcha (when on) is checked next (`captcha_failed`);
 * - a login attempt is then counted against the account name: beyond
 *   `lockout:max-failures` it is refused with `locked_out` without a password check, so
 *   concurrent guesses cannot outrun the lock. With the captcha on, a solved captcha
 *   gets its password checked even on a locked name, so strangers cannot keep the owner out;
 * - an unknown account and a wrong password both cost one bcrypt verification and fail
 *   with the same `invalid_credentials` error; a successful login clears the name's count;
 * - a signup hashes the password whether or not the name is taken, so a taken name
 *   answers `conflict` after the same work as a free one, and counts as a refusal.
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
  readonly #maxBytes: number | undefined;
  readonly #refusedLine: ThrottledLog;

  constructor(
    @inject(PORTCULLIS_CONFIG) config: PortcullisConfig,
    private readonly hasher: PasswordHasher,
    @inject(ACCOUNT_STORE) private readonly accounts: AccountStore,
    private readonly lockout: LockoutStore,
    @inject(CAPTCHA_VERIFIER) private readonly captcha: CaptchaVerifier,
    @inject(LOGGER_FACTORY) loggers: LoggerFactory = consoleLoggerFactory,
  ) {
    const { minLength, maxLength, prehash } = config.security.password;
    this.#minLength = minLength;
    this.#maxLength = maxLength;
    this.#maxBytes = prehash === 'none' ? BCRYPT_MAX_BYTES : undefined;
    this.#refusedLine = new ThrottledLog(loggers.create('portcullis:accounts'), 'warn', 'bcrypt behind: logins and signups answered overloaded (see password:max-wait-seconds)');
    // A server restarted into a login storm then bounds its first wave too.
    void hasher.prepare();
  }

  /**
   * Creates an account. Concurrent signups of one username or email: exactly one wins.
   * With `password:prehash = none` a password over 72 UTF-8 bytes is refused.
   *
   * @throws PortcullisError `invalid_request`, `overloaded` ({@link OverloadedError}), `locked_out` ({@link LockedOutError}), `captcha_failed`, `conflict`, `unavailable`.
   */
  async signup(request: SignupRequest, origin: LoginOrigin = {}): Promise<Account> {
    const email = checkEmail(request?.email);
    const username = checkUsername(request?.username);
    const password = checkPassword(request?.password, this.#minLength, this.#maxLength, this.#maxBytes);
    const captchaToken = checkCaptchaToken(request?.captchaToken);
    return this.#admitted('signups', async () => {
      await this.#claimAddress(origin);
      await this.#checkCaptcha(captchaToken, origin);
      // Hashed before the names are looked at: a taken name must cost what a free one costs.
      const passwordHash = await this.hasher.hash(password);
      const account = await this.accounts.create({ email, username, passwordHash });
      await this.lockout.releaseAddressAttempt(origin.remoteAddress);
      return account;
    });
  }

  /**
   * Logs in with email and password.
   *
   * @throws PortcullisError `invalid_request`, `overloaded` ({@link OverloadedError}), `locked_out` ({@link LockedOutError}), `captcha_failed`, `invalid_credentials`, `unavailable`.
   */
  async loginWithEmail(request: { readonly email: string; readonly password: string; readonly captchaToken?: string }, origin: LoginOrigin = {}): Promise<Account> {
    const email = checkLoginName(request?.email, 'email');
    return this.#login(email, () => this.accounts.findByEmail(email), request, origin);
  }

  /**
   * Logs in with username and password; see {@link loginWithEmail}.
   *
   * @throws PortcullisError `invalid_request`, `overloaded` ({@link OverloadedError}), `locked_out` ({@link LockedOutError}), `captcha_failed`, `invalid_credentials`, `unavailable`.
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
    return this.#admitted('logins', async () => {
      await this.#claimAddress(origin);
      await this.#checkCaptcha(captchaToken, origin);
      // Counted before bcrypt: a lock decided after the check would let concurrent guesses through.
      const claim = await this.lockout.claimAccountAttempt(accountKey);
      if (claim.locked && !this.captcha.enabled) throw new LockedOutError(claim.retryAfterSeconds);
      const account = await find();
      // One bcrypt verification whether or not the account exists (a null hash costs the same).
      const matches = await this.hasher.verify(password, account?.passwordHash ?? null);
      if (!account || !matches) {
        await this.lockout.accountAttemptFailed(accountKey, claim);
        throw new PortcullisError('invalid_credentials', WRONG_CREDENTIALS);
      }
      await this.lockout.reset(accountKey);
      await this.lockout.releaseAddressAttempt(origin.remoteAddress);
      return account;
    });
  }

  /** Runs a login or signup as one admitted password check; a refusal is counted in a throttled warning. */
  async #admitted<T>(what: string, work: () => Promise<T>): Promise<T> {
    try {
      return await this.hasher.admit(what, work);
    } catch (error) {
      if (error instanceof OverloadedError) this.#refusedLine.note({ waiting: what });
      throw error;
    }
  }

  async #claimAddress(origin: LoginOrigin): Promise<void> {
    const status = await this.lockout.claimAddressAttempt(origin.remoteAddress);
    if (status.locked) throw new LockedOutError(status.retryAfterSeconds);
  }

  async #checkCaptcha(token: unknown, origin: LoginOrigin): Promise<void> {
    if (!this.captcha.enabled) return;
    const captchaToken = checkCaptchaToken(token);
    if (!(await this.captcha.verify(captchaToken, origin.remoteAddress))) {
      throw new PortcullisError('captcha_failed', 'the captcha was not solved');
    }
  }
}
