/**
 * The embedded {@link AccountStore}: accounts in process memory.
 */
import { randomUUID } from 'node:crypto';
import { PortcullisError } from '../errors/portcullis-error.js';
import type { Account, AccountStore, NewAccount } from './account-store.js';
import { normalizeAccountKey } from '../store/lockout-store.js';

/**
 * Accounts in maps, lost on restart; for tests, development and single-process
 * servers. `create` checks and claims both names in one synchronous step, so
 * concurrent signups cannot both win.
 *
 * @example
 * ```ts
 * const store = new InMemoryAccountStore();
 * await store.create({ username: 'ada', email: 'ada@example.com', passwordHash });
 * await store.create({ username: 'ADA', email: 'other@example.com', passwordHash }); // throws conflict
 * ```
 */
export class InMemoryAccountStore implements AccountStore {
  readonly #byId = new Map<string, Account>();
  readonly #idByUsername = new Map<string, string>();
  readonly #idByEmail = new Map<string, string>();

  async create(account: NewAccount): Promise<Account> {
    const username = normalizeAccountKey(account.username);
    const email = normalizeAccountKey(account.email);
    if (this.#idByUsername.has(username)) throw new PortcullisError('conflict', 'username is taken');
    if (this.#idByEmail.has(email)) throw new PortcullisError('conflict', 'email is taken');
    const stored: Account = Object.freeze({ storageId: randomUUID(), username: account.username, email: account.email, passwordHash: account.passwordHash });
    this.#byId.set(stored.storageId, stored);
    this.#idByUsername.set(username, stored.storageId);
    this.#idByEmail.set(email, stored.storageId);
    return stored;
  }

  async findByUsername(username: string): Promise<Account | undefined> {
    return this.#lookup(this.#idByUsername.get(normalizeAccountKey(username)));
  }

  async findByEmail(email: string): Promise<Account | undefined> {
    return this.#lookup(this.#idByEmail.get(normalizeAccountKey(email)));
  }

  async findById(storageId: string): Promise<Account | undefined> {
    return this.#lookup(storageId);
  }

  #lookup(id: string | undefined): Account | undefined {
    return id === undefined ? undefined : this.#byId.get(id);
  }
}
