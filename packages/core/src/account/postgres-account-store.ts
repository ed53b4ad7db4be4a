/**
 * The durable {@link AccountStore}: accounts in a PostgreSQL table on the `pg`
 * package, which is loaded only when this store is built.
 */
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import type { Pool } from 'pg';
import type { Logger } from '../contracts/logger.js';
import { describeError } from '../errors/describe-error.js';
import { ConfigError, PortcullisError } from '../errors/portcullis-error.js';
import { silentLoggerFactory } from '../logging/logger.js';
import { normalizeAccountKey } from '../store/lockout-store.js';
import type { Account, AccountStore, NewAccount } from './account-store.js';

/**
 * Options of {@link PostgresAccountStore}.
 *
 * @example
 * ```ts
 * const options: PostgresAccountStoreOptions = { url: 'postgres://portcullis@db.internal/game', table: 'game_accounts' };
 * ```
 */
export interface PostgresAccountStoreOptions {
  /** `postgres://[user[:password]@]host[:port]/database`, passed to `pg` as is and never logged. */
  readonly url: string;
  /** The table, created on start when missing; default `portcullis_accounts`. Lower-case letters, digits and `_`. */
  readonly table?: string;
  /** Connecting, or one query, taking longer fails with `unavailable`; default 2000 ms. */
  readonly operationTimeoutMs?: number;
}

const TABLE_NAME = /^[a-z_][a-z0-9_]{0,47}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** First half of the advisory lock taken while the table is created ("port"). */
const SCHEMA_LOCK = 0x706f7274;

type AccountRow = { storage_id: string; username: string; email: string; password_hash: string | null };

/**
 * Accounts in one PostgreSQL table, shared by every server of a fleet and kept
 * across restarts of the cache and of the servers. Usernames and emails are
 * stored as typed and, normalised, in two columns with a unique constraint
 * each: the database decides which of concurrent signups wins. A database that
 * cannot be reached answers `PortcullisError('unavailable')`.
 *
 * @example
 * ```ts
 * const store = new PostgresAccountStore({ url: 'postgres://portcullis@127.0.0.1/game' });
 * await store.ready(); // creates the table when it is missing
 * await store.create({ username: 'Ada', email: 'ada@example.com', passwordHash });
 * await store.findByUsername('ada'); // the same account
 * await store.close();
 * ```
 */
export class PostgresAccountStore implements AccountStore {
  readonly #pool: Pool;
  readonly #table: string;
  readonly #timeoutMs: number;
  readonly #logger: Logger;
  #schema: Promise<void> | undefined;
  #down = false;
  #closed: Promise<void> | undefined;

  constructor(options: PostgresAccountStoreOptions, logger: Logger = silentLoggerFactory.create('portcullis:accounts')) {
    const table = options.table ?? 'portcullis_accounts';
    if (!TABLE_NAME.test(table)) throw new TypeError('table must be 1 to 48 lower-case letters, digits or "_", starting with a letter or "_"');
    this.#table = `"${table}"`;
    this.#timeoutMs = options.operationTimeoutMs ?? 2000;
    this.#logger = logger;
    const { Pool } = loadPg();
    this.#pool = new Pool({ connectionString: options.url, connectionTimeoutMillis: this.#timeoutMs, query_timeout: this.#timeoutMs, application_name: 'portcullis' });
    // An idle connection that drops emits here; without a listener it would end the process.
    this.#pool.on('error', (error) => this.#lost(error));
  }

  /**
   * Resolves once the table exists (creating it when missing); rejects with
   * `unavailable` when the database does not answer within `timeoutMs`.
   */
  async ready(timeoutMs = 2000): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(unavailable(new Error(`postgres not ready within ${timeoutMs} ms`))), timeoutMs);
    });
    try {
      await Promise.race([this.#ensureSchema(), late]);
    } finally {
      clearTimeout(timer);
    }
  }

  async create(account: NewAccount): Promise<Account> {
    const stored: Account = Object.freeze({ storageId: randomUUID(), username: account.username, email: account.email, passwordHash: account.passwordHash });
    const usernameKey = normalizeAccountKey(account.username);
    const emailKey = normalizeAccountKey(account.email);
    const inserted = await this.#query(
      `INSERT INTO ${this.#table} (storage_id, username, email, username_key, email_key, password_hash)
       VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING RETURNING storage_id`,
      [stored.storageId, stored.username, stored.email, usernameKey, emailKey, stored.passwordHash],
    );
    if (inserted.length === 1) return stored;
    // ON CONFLICT DO NOTHING waits for a competing signup to commit, so the winner is visible here.
    const [taken] = await this.#query<{ username_taken: boolean }>(
      `SELECT username_key = $1 AS username_taken FROM ${this.#table} WHERE username_key = $1 OR email_key = $2 ORDER BY 1 DESC LIMIT 1`,
      [usernameKey, emailKey],
    );
    throw new PortcullisError('conflict', taken?.username_taken === false ? 'email is taken' : 'username is taken');
  }

  async findByUsername(username: string): Promise<Account | undefined> {
    return this.#one('username_key', normalizeAccountKey(username));
  }

  async findByEmail(email: string): Promise<Account | undefined> {
    return this.#one('email_key', normalizeAccountKey(email));
  }

  async findById(storageId: string): Promise<Account | undefined> {
    return UUID.test(storageId) ? this.#one('storage_id', storageId) : undefined;
  }

  /** Closes the pool's connections. Idempotent. */
  close(): Promise<void> {
    this.#closed ??= this.#pool.end().catch(() => {});
    return this.#closed;
  }

  async #one(column: 'username_key' | 'email_key' | 'storage_id', value: string): Promise<Account | undefined> {
    const [row] = await this.#query<AccountRow>(`SELECT storage_id, username, email, password_hash FROM ${this.#table} WHERE ${column} = $1`, [value]);
    return row && Object.freeze({ storageId: row.storage_id, username: row.username, email: row.email, passwordHash: row.password_hash });
  }

  /** Creates the table once per store; a failed attempt is retried by the next operation. */
  #ensureSchema(): Promise<void> {
    this.#schema ??= this.#run(() => this.#pool.query(this.#schemaSql())).then(
      () => undefined,
      (error: unknown) => {
        this.#schema = undefined;
        throw error;
      },
    );
    return this.#schema;
  }

  /**
   * One simple-protocol query is one transaction, so the advisory lock serialises
   * servers creating the table at once (`IF NOT EXISTS` alone can race).
   */
  #schemaSql(): string {
    const t = this.#table;
    const name = t.slice(1, -1);
    return `SELECT pg_advisory_xact_lock(${SCHEMA_LOCK}, hashtext('${name}'));
      CREATE TABLE IF NOT EXISTS ${t} (
        storage_id uuid PRIMARY KEY,
        username text NOT NULL,
        email text NOT NULL,
        username_key text NOT NULL CONSTRAINT ${name}_username_unique UNIQUE,
        email_key text NOT NULL CONSTRAINT ${name}_email_unique UNIQUE,
        password_hash text,
        created_at timestamptz NOT NULL DEFAULT now()
      )`;
  }

  async #query<Row = AccountRow>(sql: string, values: unknown[]): Promise<Row[]> {
    await this.#ensureSchema();
    const result = await this.#run(() => this.#pool.query(sql, values));
    return result.rows as Row[];
  }

  async #run<T>(operation: () => Promise<T>): Promise<T> {
    if (this.#closed) throw unavailable(new Error('the account store is closed'));
    try {
      const result = await operation();
      if (this.#down) {
        this.#down = false;
        this.#logger.info('postgres connection restored');
      }
      return result;
    } catch (error) {
      this.#lost(error);
      throw unavailable(error);
    }
  }

  #lost(error: unknown): void {
    if (this.#down || this.#closed) return;
    this.#down = true;
    const sqlState = (error as { code?: unknown }).code;
    this.#logger.warn('postgres account store failed; signup and login answer unavailable until it is back', {
      ...describeError(error),
      ...(typeof sqlState === 'string' && /^[0-9A-Z]{5}$/.test(sqlState) ? { sqlState } : {}),
    });
  }
}

function unavailable(cause: unknown): PortcullisError {
  return new PortcullisError('unavailable', 'the account store cannot be reached', { cause });
}

/** `pg` is an optional peer dependency: required here, synchronously, only for this store. */
function loadPg(): typeof import('pg') {
  try {
    return createRequire(import.meta.url)('pg') as typeof import('pg');
  } catch (cause) {
    if ((cause as NodeJS.ErrnoException).code !== 'MODULE_NOT_FOUND') throw cause;
    throw new ConfigError('svc:persistence:accounts:provider', '"postgres" needs the pg package next to @portcullis/core (npm install pg)');
  }
}
