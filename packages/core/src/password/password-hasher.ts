/**
 * Password hashing and verification with bcrypt, at the configured cost and
 * prehash mode, through the process's {@link BcryptLimiter}.
 */
import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { inject, injectable, registry } from 'tsyringe';
import { PORTCULLIS_CONFIG } from '../contracts/injection-tokens.js';
import type { PortcullisConfig } from '../contracts/portcullis-config.js';
import { normaliseBcryptHash } from './bcrypt-hash-format.js';
import { BcryptLimiter } from './bcrypt-limiter.js';
import { assertPassword, bcryptInput, type PasswordPrehash } from './password-input.js';

/**
 * One dummy hash per cost, shared by every hasher in the process. Verifying
 * against it is what a missing or malformed hash costs.
 */
const dummyHashes = new Map<number, string>();

/**
 * Hashes and verifies passwords with bcrypt.
 *
 * - `password:work-factor` is the bcrypt cost of new hashes; a stored hash of
 *   another cost still verifies (at its own cost), and {@link needsRehash} says so.
 * - `password:prehash = sha384` gives bcrypt the base64 SHA-384 digest of every
 *   password, so passwords over 72 bytes count whole. Hashes made in one mode do
 *   not verify in the other.
 * - `verify` with a null, undefined or malformed hash spends one bcrypt
 *   computation at the configured cost and answers false, so an unknown account
 *   takes as long as a wrong password.
 * - {@link admit} runs a whole login or signup as one admitted password check, or
 *   refuses it at once with `overloaded` when it would wait more than
 *   `password:max-wait-seconds` for bcrypt.
 * - A password that is not a string, is longer than `password:max-length`
 *   characters (code points) or holds a lone surrogate is refused with
 *   `PortcullisError('invalid_password')`. `password:min-length` is a signup
 *   policy and is not applied here.
 *
 * @example
 * ```ts
 * const hasher = new PasswordHasher(loadConfig());
 * const stored = await hasher.hash('correct horse battery staple');
 * await hasher.verify('correct horse battery staple', stored); // true
 * await hasher.verify('anything', account?.passwordHash);       // false, same time as a wrong password
 * ```
 */
@injectable()
@registry([{ token: BcryptLimiter, useValue: BcryptLimiter.shared }])
export class PasswordHasher {
  readonly #workFactor: number;
  readonly #prehash: PasswordPrehash;
  readonly #maxLength: number;
  readonly #maxWaitMs: number;
  readonly #limiter: BcryptLimiter;

  /**
   * @param limiter the concurrency cap bcrypt runs under; the process-wide
   *   {@link BcryptLimiter.shared} by default (also what tsyringe injects).
   */
  constructor(@inject(PORTCULLIS_CONFIG) config: PortcullisConfig, limiter: BcryptLimiter = BcryptLimiter.shared) {
    const { workFactor, prehash, maxLength, maxWaitSeconds } = config.security.password;
    this.#workFactor = workFactor;
    this.#prehash = prehash;
    this.#maxLength = maxLength;
    this.#maxWaitMs = maxWaitSeconds * 1000;
    this.#limiter = limiter;
  }

  /**
   * Runs `work` (a login or signup, from before it counts anything to its end) as one
   * admitted password check; refuses it at once, without running it, while the checks
   * already admitted would keep it waiting more than `password:max-wait-seconds` for
   * bcrypt (see {@link BcryptLimiter.admit}).
   *
   * @example
   * ```ts
   * const newHash = await hasher.admit('password changes', async () => {
   *   if (!(await hasher.verify(body.oldPassword, account.passwordHash))) throw new PortcullisError('invalid_credentials', 'wrong password');
   *   return hasher.hash(body.newPassword);
   * });
   * ```
   *
   * @throws OverloadedError (code `overloaded`, HTTP 503 with `Retry-After`).
   */
  admit<T>(what: string, work: () => Promise<T>): Promise<T> {
    return this.#limiter.admit(this.#maxWaitMs, what, work);
  }

  /**
   * A new bcrypt hash of `password` (fresh salt, configured cost and prehash).
   *
   * @throws PortcullisError `invalid_password` for a non-string or over-long password.
   */
  async hash(password: string): Promise<string> {
    assertPassword(password, this.#maxLength);
    return this.#limiter.hash(bcryptInput(password, this.#prehash), this.#workFactor);
  }

  /**
   * True when `password` matches `hash`. A null, undefined or malformed `hash`
   * answers false after the same bcrypt work as a real one; it never throws for it.
   *
   * @throws PortcullisError `invalid_password` for a non-string or over-long password.
   */
  async verify(password: string, hash: string | null | undefined): Promise<boolean> {
    assertPassword(password, this.#maxLength);
    const input = bcryptInput(password, this.#prehash);
    const stored = normaliseBcryptHash(hash);
    if (stored !== undefined) return this.#limiter.compare(input, stored);
    await this.spendOneVerification(input);
    return false;
  }

  /**
   * True when `hash` should be replaced after a successful login: it is malformed
   * or its cost differs from `password:work-factor`.
   *
   * @example
   * ```ts
   * if (await hasher.verify(pw, account.hash) && hasher.needsRehash(account.hash)) {
   *   account.hash = await hasher.hash(pw);
   * }
   * ```
   */
  needsRehash(hash: string | null | undefined): boolean {
    const stored = normaliseBcryptHash(hash);
    return stored === undefined || Number(stored.slice(4, 6)) !== this.#workFactor;
  }

  /**
   * Makes, ahead of the first login, the dummy hash an unknown account is checked against:
   * one bcrypt computation at the configured cost, which also gives the limiter a first
   * time, so {@link admit} bounds the wait from the first wave of a storm. Done once per
   * cost and process; the login service starts it when it is built. Never rejects.
   *
   * @example
   * ```ts
   * await hasher.prepare(); // the first unknown-account login no longer makes the dummy
   * ```
   */
  async prepare(): Promise<void> {
    if (dummyHashes.has(this.#workFactor)) return;
    // On failure the first login that needs the dummy makes it, and fails as it would have.
    await this.makeDummy().catch(() => undefined);
  }

  private async spendOneVerification(input: string): Promise<void> {
    const dummy = dummyHashes.get(this.#workFactor);
    if (dummy !== undefined) {
      await this.#limiter.compare(input, dummy);
      return;
    }
    // Making the dummy is itself one bcrypt computation at the configured cost,
    // so even the first unknown account costs what a real verification costs.
    await this.makeDummy();
  }

  private async makeDummy(): Promise<void> {
    const made = await this.#limiter.hash(randomBytes(24).toString('base64'), this.#workFactor);
    if (!dummyHashes.has(this.#workFactor)) dummyHashes.set(this.#workFactor, made);
  }
}
