/**
 * The account model of the login service and the store that keeps it.
 */
import type { InjectionToken } from 'tsyringe';

/**
 * The account model, as login hooks see it. `passwordHash` is null for an
 * account without a password (for example one created by an external login).
 *
 * @example
 * ```ts
 * const account: Account = { storageId: randomUUID(), username: 'ada', email: 'ada@example.com', passwordHash: null };
 * ```
 */
export interface Account {
  /** The account's stable id; the `sub` of its tokens. */
  readonly storageId: string;
  /** The username as the user typed it at signup (lookups ignore case). */
  readonly username: string;
  /** The email as the user typed it at signup (lookups ignore case). */
  readonly email: string;
  /** bcrypt hash of the password; null when the account has none. */
  readonly passwordHash: string | null;
}

/**
 * What {@link AccountStore.create} needs; the store assigns the `storageId`.
 *
 * @example
 * ```ts
 * await accounts.create({ username: 'ada', email: 'ada@example.com', passwordHash } satisfies NewAccount);
 * ```
 */
export interface NewAccount {
  readonly username: string;
  readonly email: string;
  readonly passwordHash: string | null;
}

/**
 * Keeps accounts. Username and email are each unique, compared after
 * {@link normalizeAccountKey}; `create` is atomic, so of any number of concurrent
 * signups with one username or email exactly one succeeds.
 *
 * @example
 * ```ts
 * const store: AccountStore = new InMemoryAccountStore();
 * const ada = await store.create({ username: 'Ada', email: 'ada@example.com', passwordHash });
 * await store.findByUsername('ADA'); // the same account
 * ```
 */
export interface AccountStore {
  /**
   * Stores a new account and returns it with its `storageId`.
   *
   * @throws PortcullisError `conflict` when the username or the email is taken.
   */
  create(account: NewAccount): Promise<Account>;
  /** The account with this username (case-insensitive), if any. */
  findByUsername(username: string): Promise<Account | undefined>;
  /** The account with this email (case-insensitive), if any. */
  findByEmail(email: string): Promise<Account | undefined>;
  /** The account with this `storageId`, if any. */
  findById(storageId: string): Promise<Account | undefined>;
}

/**
 * Injection token of the application's {@link AccountStore}.
 *
 * @example
 * ```ts
 * container.register(ACCOUNT_STORE, { useValue: new PostgresAccountStore(pool) });
 * ```
 */
export const ACCOUNT_STORE: InjectionToken<AccountStore> = Symbol.for('portcullis:account-store');
