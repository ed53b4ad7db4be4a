/**
 * The fleet-wide {@link AccountStore}: accounts in Redis on the `@keyv/redis`
 * client, with signup made atomic by one Lua script.
 */
import { randomUUID } from 'node:crypto';
import { PortcullisError } from '../errors/portcullis-error.js';
import type { Logger } from '../contracts/logger.js';
import { describeError } from '../errors/describe-error.js';
import { silentLoggerFactory } from '../logging/logger.js';
import { closeRedisClient, guarded, openRedisClient, topologyOf, waitUntilReady, type RedisClient, type RedisTarget } from '../store/redis-connection.js';
import type { Account, AccountStore, NewAccount } from './account-store.js';
import { normalizeAccountKey } from '../store/lockout-store.js';

/**
 * Options of {@link RedisAccountStore}: a URL to connect to, or a client to share.
 *
 * @example
 * ```ts
 * const store = new RedisAccountStore({ url: config.persistence.cache.url, keyPrefix: 'game' } satisfies RedisAccountStoreOptions);
 * ```
 */
export type RedisAccountStoreOptions = (RedisTarget | { readonly client: RedisClient }) & {
  /** Prefix of every key; default `portcullis`. Keys are `<prefix>:account:…` (`{<prefix>:account}:…` on a cluster). */
  readonly keyPrefix?: string;
  /** An operation taking longer fails with `unavailable`; default 1000 ms. */
  readonly operationTimeoutMs?: number;
};

// Checking and claiming both names in one script is what makes concurrent
// signups of one username (or email) produce exactly one winner.
const CREATE_SCRIPT = `
if redis.call('EXISTS', KEYS[1]) == 1 then return 1 end
if redis.call('EXISTS', KEYS[2]) == 1 then return 2 end
redis.call('SET', KEYS[1], ARGV[1])
redis.call('SET', KEYS[2], ARGV[1])
redis.call('SET', KEYS[3], ARGV[2])
return 0`;

/**
 * Accounts in Redis, shared by every server of a fleet. Keys:
 * `<prefix>:account:id:<storageId>` (the account as JSON) and
 * `<prefix>:account:username:<name>`, `<prefix>:account:email:<email>` (each the
 * `storageId`; names normalised). Keyv's get/set cannot claim two keys at once,
 * so every command goes to the client directly, in one format. A Redis that
 * cannot be reached answers `PortcullisError('unavailable')` at once.
 *
 * @example
 * ```ts
 * const store = new RedisAccountStore({ url: config.persistence.cache.url });
 * await store.ready();
 * await store.create({ username: 'ada', email: 'ada@example.com', passwordHash });
 * await store.close();
 * ```
 */
export class RedisAccountStore implements AccountStore {
  readonly #client: RedisClient;
  readonly #ownsClient: boolean;
  readonly #prefix: string;
  readonly #timeoutMs: number;
  readonly #logger: Logger;
  #persistenceChecked = false;

  constructor(options: RedisAccountStoreOptions, logger: Logger = silentLoggerFactory.create('portcullis:accounts')) {
    this.#logger = logger;
    this.#ownsClient = 'url' in options;
    this.#client = 'url' in options ? openRedisClient(options, logger, 'accounts') : options.client;
    const prefix = options.keyPrefix ?? 'portcullis';
    // On a cluster every account key carries one hash tag: the signup script needs the
    // username, email and id keys in one slot. Accounts then live on one primary.
    this.#prefix = topologyOf(this.#client) === 'cluster' ? `{${prefix}:account}:` : `${prefix}:account:`;
    this.#timeoutMs = options.operationTimeoutMs ?? 1000;
  }

  /**
   * Resolves once Redis answers; rejects with `unavailable` after `timeoutMs`.
   * The first time, it also asks Redis whether it persists its data and logs a
   * warning when it does not (accounts would be lost on its restart), or when
   * Redis refuses `CONFIG GET`.
   */
  async ready(timeoutMs = 2000): Promise<void> {
    await waitUntilReady(this.#client, timeoutMs);
    if (this.#persistenceChecked) return;
    this.#persistenceChecked = true;
    await this.#warnWithoutPersistence();
  }

  async create(account: NewAccount): Promise<Account> {
    const stored: Account = { storageId: randomUUID(), username: account.username, email: account.email, passwordHash: account.passwordHash };
    const keys = [this.#usernameKey(account.username), this.#emailKey(account.email), this.#idKey(stored.storageId)];
    const outcome = await this.#run(() => this.#client.eval(CREATE_SCRIPT, { keys, arguments: [stored.storageId, JSON.stringify(stored)] }));
    if (Number(outcome) === 1) throw new PortcullisError('conflict', 'username is taken');
    if (Number(outcome) === 2) throw new PortcullisError('conflict', 'email is taken');
    return Object.freeze(stored);
  }

  async findByUsername(username: string): Promise<Account | undefined> {
    return this.#byIndex(this.#usernameKey(username));
  }

  async findByEmail(email: string): Promise<Account | undefined> {
    return this.#byIndex(this.#emailKey(email));
  }

  async findById(storageId: string): Promise<Account | undefined> {
    const json = await this.#run(() => this.#client.get(this.#idKey(storageId)));
    return typeof json === 'string' ? parseAccount(json) : undefined;
  }

  /** Closes the connection when the store opened it. Idempotent. */
  async close(): Promise<void> {
    if (this.#ownsClient) await closeRedisClient(this.#client);
  }

  async #warnWithoutPersistence(): Promise<void> {
    let config: Record<string, string>;
    try {
      config = { ...(await this.#run(() => this.#client.configGet(['save', 'appendonly']))) } as Record<string, string>;
    } catch (error) {
      const cause = (error as { cause?: { cause?: unknown } }).cause?.cause ?? error;
      this.#logger.warn('cannot tell whether redis persists accounts: CONFIG GET was refused; without AOF or RDB snapshots a redis restart loses every account', describeError(cause));
      return;
    }
    const snapshots = (config.save ?? '').trim() !== '';
    const appendOnly = (config.appendonly ?? '').trim().toLowerCase() === 'yes';
    if (!snapshots && !appendOnly) {
      this.#logger.warn('redis has no persistence (save and appendonly are off): a redis restart loses every account; turn on AOF or use svc:persistence:accounts:provider = postgres');
    }
  }

  async #byIndex(indexKey: string): Promise<Account | undefined> {
    const id = await this.#run(() => this.#client.get(indexKey));
    return typeof id === 'string' ? this.findById(id) : undefined;
  }

  #run<T>(operation: () => Promise<T>): Promise<T> {
    return guarded(this.#client, this.#timeoutMs, operation).catch((cause: unknown) => {
      throw new PortcullisError('unavailable', 'the account store cannot be reached', { cause });
    });
  }

  #idKey(storageId: string): string {
    return `${this.#prefix}id:${storageId}`;
  }

  #usernameKey(username: string): string {
    return `${this.#prefix}username:${normalizeAccountKey(username)}`;
  }

  #emailKey(email: string): string {
    return `${this.#prefix}email:${normalizeAccountKey(email)}`;
  }
}

function parseAccount(json: string): Account {
  const { storageId, username, email, passwordHash } = JSON.parse(json) as Account;
  return Object.freeze({ storageId, username, email, passwordHash: passwordHash ?? null });
}
