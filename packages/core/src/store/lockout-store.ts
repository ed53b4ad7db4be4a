/**
 * Login lockout, decided before any password is checked. Each attempt on an account key is
 * counted first (`lockout:window-minutes`); an attempt beyond `lockout:max-failures` is refused
 * without a password check, and the failure of the last allowed one locks the key for
 * `lockout:lock-minutes`. Failed logins and refused signups are counted per client address
 * too (`lockout:ip-max-failures`). Counters live in memory or, with `lockout:store = backplane`,
 * in Redis shared by the fleet, and change atomically either way.
 */
import { createHash } from 'node:crypto';
import { inject, injectable } from 'tsyringe';
import { PORTCULLIS_CONFIG } from '../contracts/injection-tokens.js';
import type { PortcullisConfig } from '../contracts/portcullis-config.js';
import { addressBucket } from './address-bucket.js';
import type { CacheStore } from './cache-store.js';
import { SessionStores } from './session-stores.js';

/**
 * Whether an account is locked, and for how many more seconds (0 when not locked).
 *
 * @example
 * ```ts
 * const { locked, retryAfterSeconds }: LockoutStatus = await lockout.isLocked(username);
 * ```
 */
export interface LockoutStatus {
  readonly locked: boolean;
  readonly retryAfterSeconds: number;
}

const UNLOCKED: LockoutStatus = Object.freeze({ locked: false, retryAfterSeconds: 0 });

/**
 * The one normalisation of an account key (username or email) shared by the account
 * lookup and the lockout counters: NFKC-normalised, trimmed and lower-cased, so
 * `" Alice"`, `"alice"` and full-width `"ａｌｉｃｅ"` count against the same account.
 *
 * @example
 * ```ts
 * const account = await accounts.findByUsername(normalizeAccountKey(body.username));
 * ```
 */
export function normalizeAccountKey(accountKey: string): string {
  return accountKey.normalize('NFKC').trim().toLowerCase();
}

/** The counter key: a digest, so the store holds neither raw names or addresses nor unbounded keys. */
function digest(text: string): string {
  return createHash('sha256').update(text).digest('base64url');
}

function counterKey(accountKey: string): string {
  return digest(normalizeAccountKey(accountKey));
}

function statusOf(remainingMs: number): LockoutStatus {
  return { locked: true, retryAfterSeconds: Math.max(1, Math.ceil(remainingMs / 1000)) };
}

/**
 * One counted login attempt on an account key: whether it is refused, and whether it used
 * the last allowed failure (its failure then locks the key).
 *
 * @example
 * ```ts
 * const claim: AttemptClaim = await lockout.claimAccountAttempt(username);
 * if (claim.locked) throw new LockedOutError(claim.retryAfterSeconds);
 * ```
 */
export interface AttemptClaim extends LockoutStatus {
  readonly last: boolean;
}

/**
 * Counts login attempts per account key and failures per client address, and says when
 * either is locked. An account's counter holds the attempts not yet known to have
 * succeeded, so of any number of concurrent attempts at most `max-failures` are allowed
 * a password check before the key locks.
 *
 * @example
 * ```ts
 * const claim = await lockout.claimAccountAttempt(username);
 * if (claim.locked) return reply(429, { 'Retry-After': claim.retryAfterSeconds });
 * if (await hasher.verify(password, account?.passwordHash)) await lockout.reset(username);
 * else await lockout.accountAttemptFailed(username, claim);
 * ```
 */
@injectable()
export class LockoutStore {
  private readonly cache: CacheStore;
  private readonly maxFailures: number;
  private readonly ipMaxFailures: number;
  private readonly windowMs: number;
  private readonly lockMs: number;

  constructor(@inject(PORTCULLIS_CONFIG) config: PortcullisConfig, stores: SessionStores) {
    this.cache = stores.lockout;
    this.maxFailures = config.security.lockout.maxFailures;
    this.ipMaxFailures = config.security.lockout.ipMaxFailures;
    const times = stores.options.lockoutTimesMs;
    this.windowMs = times?.window ?? config.security.lockout.windowMinutes * 60_000;
    this.lockMs = times?.lock ?? config.security.lockout.lockMinutes * 60_000;
  }

  /**
   * Counts one login attempt on the account key, before its password is checked. Refused
   * (`locked`) when the key is locked or `max-failures` attempts are already counted.
   *
   * @throws PortcullisError `unavailable` when the backplane cannot be reached.
   */
  async claimAccountAttempt(accountKey: string): Promise<AttemptClaim> {
    const key = counterKey(accountKey);
    const attempts = await this.cache.increment('lockout-failures', key, this.windowMs);
    if (attempts <= this.maxFailures) return { ...UNLOCKED, last: attempts === this.maxFailures };
    return { ...statusOf(await this.cache.remainingMs('lockout-failures', key)), last: false };
  }

  /**
   * Records that a claimed attempt failed. The failure of the last allowed attempt locks
   * the key for `lock-minutes` from now; earlier failures stay counted for the window.
   *
   * @throws PortcullisError `unavailable` when the backplane cannot be reached.
   */
  async accountAttemptFailed(accountKey: string, claim: AttemptClaim): Promise<void> {
    if (claim.last) await this.cache.expire('lockout-failures', counterKey(accountKey), this.lockMs);
  }

  /**
   * Whether the account key is locked now (or all its attempts are taken by checks still running).
   *
   * @throws PortcullisError `unavailable` when the backplane cannot be reached.
   */
  async isLocked(accountKey: string): Promise<LockoutStatus> {
    const { count, remainingMs } = await this.cache.counter('lockout-failures', counterKey(accountKey));
    return count >= this.maxFailures && remainingMs > 0 ? statusOf(remainingMs) : UNLOCKED;
  }

  /**
   * Forgets the attempts and any lock of the account key: after a successful login, or to
   * unlock an account by hand.
   *
   * @throws PortcullisError `unavailable` when the backplane cannot be reached.
   */
  async reset(accountKey: string): Promise<void> {
    await this.cache.delete('lockout-failures', counterKey(accountKey));
  }

  /**
   * Counts one login or signup from a client address before any password work; refused
   * (`locked`) beyond `ip-max-failures` in the window. Undefined addresses and a limit of 0
   * are never counted. A success gives its count back with {@link releaseAddressAttempt}.
   *
   * @throws PortcullisError `unavailable` when the backplane cannot be reached.
   */
  async claimAddressAttempt(address: string | undefined): Promise<LockoutStatus> {
    if (address === undefined || this.ipMaxFailures === 0) return UNLOCKED;
    const key = digest(addressBucket(address));
    const count = await this.cache.increment('lockout-address', key, this.windowMs);
    return count <= this.ipMaxFailures ? UNLOCKED : statusOf(await this.cache.remainingMs('lockout-address', key));
  }

  /**
   * Gives back the count of an attempt that succeeded, so a shared address (a NAT, a campus)
   * is limited by its failures only.
   *
   * @throws PortcullisError `unavailable` when the backplane cannot be reached.
   */
  async releaseAddressAttempt(address: string | undefined): Promise<void> {
    if (address === undefined || this.ipMaxFailures === 0) return;
    await this.cache.increment('lockout-address', digest(addressBucket(address)), this.windowMs, -1);
  }

  /**
   * Forgets the failures of a client address (IPv6: of its /64): the unlock path for an
   * address that was limited.
   *
   * @example
   * ```ts
   * await lockout.resetAddress('203.0.113.9');
   * ```
   * @throws PortcullisError `unavailable` when the backplane cannot be reached.
   */
  async resetAddress(address: string): Promise<void> {
    await this.cache.delete('lockout-address', digest(addressBucket(address)));
  }
}
