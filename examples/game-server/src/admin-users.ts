/**
 * Who gets the role `admin` in the example. Not a name alone: whoever signed up first under a
 * listed name would get it. The operator lists names in `ADMIN_USERS` and gives the bcrypt hash
 * of the admins' password in `ADMIN_PASSWORD_HASH`; at start-up each listed name that has no
 * account gets one with that hash, and only accounts holding exactly that hash are admins. A
 * signup hashes its password with a fresh salt, so no one can sign up into the operator's hash.
 */
import type { AccountStore, Logger } from '@portcullis/core';
import type { InjectionToken } from 'tsyringe';

/** The `storageId`s of the accounts that get the `admin` role at login. */
export const ADMIN_ACCOUNTS: InjectionToken<ReadonlySet<string>> = Symbol.for('game-server:admin-accounts');

const BCRYPT_HASH = /^\$2[aby]\$\d{2}\$[./A-Za-z0-9]{53}$/;

/**
 * Parses `ADMIN_USERS`: comma-separated usernames, case-insensitive.
 *
 * @example
 * ```ts
 * parseAdminUsers(' Ada, bob ,,'); // Set { 'ada', 'bob' }
 * ```
 */
export function parseAdminUsers(list: string | undefined): ReadonlySet<string> {
  return new Set((list ?? '').split(',').map((name) => name.trim().toLowerCase()).filter((name) => name.length > 0));
}

/**
 * Finds, or creates with `passwordHash`, the account of each listed name, and answers the
 * `storageId`s of those that hold exactly `passwordHash`. A listed name whose account has
 * another password (someone signed it up first) is not granted, and the log says so.
 * Without a hash nobody is admin.
 *
 * @throws Error when `passwordHash` is set but is not a bcrypt hash.
 * @example
 * ```ts
 * const admins = await grantAdmins(accounts, parseAdminUsers(env.ADMIN_USERS), env.ADMIN_PASSWORD_HASH, log);
 * ```
 */
export async function grantAdmins(accounts: AccountStore, names: ReadonlySet<string>, passwordHash: string | undefined, log: Logger): Promise<ReadonlySet<string>> {
  if (names.size === 0) return new Set();
  if (passwordHash === undefined || passwordHash === '') {
    log.warn('ADMIN_USERS is set but ADMIN_PASSWORD_HASH is not: nobody gets the admin role', { names: [...names] });
    return new Set();
  }
  if (!BCRYPT_HASH.test(passwordHash)) throw new Error('ADMIN_PASSWORD_HASH must be a bcrypt hash ($2b$…, 60 characters)');
  const admins = new Set<string>();
  for (const name of names) {
    let account = await accounts.findByUsername(name);
    if (!account) {
      try {
        account = await accounts.create({ username: name, email: `${name}@admin.invalid`, passwordHash });
      } catch {
        account = await accounts.findByUsername(name);
      }
    }
    if (account?.passwordHash === passwordHash) admins.add(account.storageId);
    else log.warn('admin role not granted: the account of this name was not made with ADMIN_PASSWORD_HASH', { name });
  }
  return admins;
}
