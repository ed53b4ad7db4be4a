import type { InjectionToken } from 'tsyringe';

/** The usernames (lower-cased) that get the `admin` role at login. */
export const ADMIN_USERS: InjectionToken<ReadonlySet<string>> = Symbol.for('game-server:admin-users');

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
