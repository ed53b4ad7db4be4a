/**
 * Account lockout: failed logins are counted per account in a window
 * (`lockout:window-minutes`); at `lockout:max-failures` the account is locked for
 * `lockout:lock-minutes`. Counters live in memory or, with `lockout:store = backplane`,
 * in Redis shared by the fleet, and increase atomically either way.
 */
import { createHash } from 'node:crypto';
import { inject, injectable } from 'tsyringe';
import { PORTCULLIS_CONFIG } from '../contracts/injection-tokens.js';
import type { PortcullisConfig } from '../contracts/portcullis-config.js';
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

/** The counter key: a digest, so the store holds neither raw usernames nor unbounded keys. */
function counterKey(accountKey: string): string {
  return createHash('sha256').update(normalizeAccountKey(accountKey)).digest('base64url');
}

/**
 * Counts login failures and locks accounts.
 *
 * @example
 * ```ts
 * const status = await lockout.isLocked(username);
 * if (status.locked) return reply(429, { 'Retry-After': status.retryAfterSeconds });
 * if (!(await hasher.verify(password, account?.passwordHash))) await lockout.registerFailure(username);
 * else await lockout.reset(username);
 * ```
 */
@injectable()
export class LockoutStore {
  private readonly cache: CacheStore;
  private readonly maxFailures: number;
  private readonly windowMs: number;
  private readonly lockMs: number;

  constructor(@inject(PORTCULLIS_CONFIG) config: PortcullisConfig, stores: SessionStores) {
    this.cache = stores.lockout;
    this.maxFailures = config.security.lockout.maxFailures;
    const times = stores.options.lockoutTimesMs;
    this.windowMs = times?.window ?? config.security.lockout.windowMinutes * 60_000;
    this.lockMs = times?.lock ?? config.security.lockout.lockMinutes * 60_000;
  }

  /**
   * Counts one failure; the failure that reaches `max-failures` within the window locks
   * the account. Answers the status after this failure.
   *
   * @throws PortcullisError `unavailable` when the backplane cannot be reached.
   */
  async registerFailure(accountKey: string): Promise<LockoutStatus> {
    const key = counterKey(accountKey);
    const failures = await this.cache.increment('lockout-failures', key, this.windowMs);
    if (failures < this.maxFailures) return UNLOCKED;
    // NX: concurrent failures past the limit do not extend a lock that is already running.
    await this.cache.setIfAbsent('lockout-lock', key, true, this.lockMs);
    await this.cache.delete('lockout-failures', key);
    return this.isLocked(accountKey);
  }

  /**
   * Whether the account is locked now.
   *
   * @throws PortcullisError `unavailable` when the backplane cannot be reached.
   */
  async isLocked(accountKey: string): Promise<LockoutStatus> {
    const remainingMs = await this.cache.remainingMs('lockout-lock', counterKey(accountKey));
    return remainingMs > 0 ? { locked: true, retryAfterSeconds: Math.ceil(remainingMs / 1000) } : UNLOCKED;
  }

  /**
   * Forgets the failures and any lock of the account (after a successful login, or to
   * unlock by hand).
   */
  async reset(accountKey: string): Promise<void> {
    const key = counterKey(accountKey);
    await this.cache.write([
      { kind: 'delete', ns: 'lockout-failures', key },
      { kind: 'delete', ns: 'lockout-lock', key },
    ]);
  }
}
