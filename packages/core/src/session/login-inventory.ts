/**
 * The session inventory: one record per login (a refresh family) with when it was made
 * and last refreshed, where from, and whether it was upgraded to a session; indexed per
 * principal so a player can list and end their own logins.
 */
import { randomBytes } from 'node:crypto';
import type { SessionSummary } from '@portcullis/protocol';
import type { CacheRef, CacheStore } from '../store/cache-store.js';

/** `login` namespace: one login of a principal. */
interface LoginRecord {
  readonly id: string;
  readonly principalId: string;
  readonly createdAt: number;
  readonly refreshedAt: number;
  readonly ip: string | undefined;
  readonly userAgent: string | undefined;
  readonly upgraded: boolean;
}

/** A live login and its family id. */
export interface LiveLogin extends LoginRecord {
  readonly fam: string;
}

/** Where a login came from, as the HTTP layer saw it. */
export interface LoginOrigin {
  readonly ip?: string | undefined;
  readonly userAgent?: string | undefined;
}

/** A user agent is the client's text: kept, but never more than this. */
const MAX_USER_AGENT = 256;

/**
 * Reads and writes login records. A record lives as long as the login's longest refresh
 * token and is renewed by every refresh; a login whose family or principal was revoked
 * is not listed.
 *
 * @example
 * ```ts
 * const logins = new LoginInventory(cache, 7 * 86_400_000, 32);
 * await logins.record('player-42', pair.familyId, { ip, userAgent });
 * ```
 */
export class LoginInventory {
  constructor(
    private readonly cache: CacheStore,
    /** How long a login record lives, renewed by every refresh. */
    readonly ttlMs: number,
    /** Live logins kept per principal; a new one beyond it ends the oldest. */
    readonly maxPerPrincipal: number,
  ) {}

  /** Records a new login; answers the logins beyond the bound, which the caller ends. */
  async record(principalId: string, fam: string, origin: LoginOrigin): Promise<LiveLogin[]> {
    const now = Date.now();
    const record: LoginRecord = Object.freeze({
      id: randomBytes(16).toString('base64url'),
      principalId,
      createdAt: now,
      refreshedAt: now,
      ip: origin.ip,
      userAgent: origin.userAgent?.slice(0, MAX_USER_AGENT),
      upgraded: false,
    });
    await this.cache.write([
      { kind: 'set', ns: 'login', key: fam, value: record, ttlMs: this.ttlMs },
      { kind: 'add-member', ns: 'principal-logins', key: principalId, member: fam, ttlMs: this.ttlMs },
    ]);
    const live = await this.list(principalId);
    return live.slice(this.maxPerPrincipal);
  }

  /** Notes a refresh of the login (and, after an upgrade, that it was upgraded). */
  async touch(fam: string | undefined, upgraded = false): Promise<void> {
    if (fam === undefined) return;
    const record = await this.cache.get<LoginRecord>('login', fam);
    if (record === undefined) return;
    const next = Object.freeze({ ...record, refreshedAt: Date.now(), upgraded: record.upgraded || upgraded });
    await this.cache.write([
      { kind: 'set', ns: 'login', key: fam, value: next, ttlMs: this.ttlMs },
      { kind: 'add-member', ns: 'principal-logins', key: record.principalId, member: fam, ttlMs: this.ttlMs },
    ]);
  }

  /** The principal's live logins, newest first; index members of logins gone are dropped. */
  async list(principalId: string): Promise<LiveLogin[]> {
    const fams = await this.cache.members('principal-logins', principalId);
    if (fams.length === 0) return [];
    const refs: CacheRef[] = [['principal-cutoff', principalId]];
    for (const fam of fams) refs.push(['login', fam], ['revoked-family', fam]);
    const values = await this.cache.getMany(refs);
    const cutoffMs = typeof values[0] === 'number' ? values[0] * 1000 : -Infinity;
    const live: LiveLogin[] = [];
    const gone: string[] = [];
    fams.forEach((fam, i) => {
      const record = values[1 + 2 * i] as LoginRecord | undefined;
      const revoked = values[2 + 2 * i] !== undefined;
      // iat has one-second resolution: a cut-off covers every token issued in its second.
      if (record === undefined || revoked || Math.floor(record.refreshedAt / 1000) * 1000 <= cutoffMs) gone.push(fam);
      else live.push({ ...record, fam });
    });
    if (gone.length > 0) await this.forget(principalId, gone);
    return live.sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? -1 : 1));
  }

  /** Drops records of logins that ended. */
  async forget(principalId: string, fams: readonly string[]): Promise<void> {
    await this.cache.write(fams.flatMap((fam) => [
      { kind: 'delete', ns: 'login', key: fam } as const,
      { kind: 'remove-member', ns: 'principal-logins', key: principalId, member: fam } as const,
    ]));
  }
}

/**
 * The wire form of a live login.
 *
 * @example
 * ```ts
 * res.json({ sessions: (await logins.list(id)).map((login) => loginSummary(login, currentFam)) });
 * ```
 */
export function loginSummary(login: LiveLogin, currentFam: string | undefined): SessionSummary {
  return {
    id: login.id,
    createdAt: new Date(login.createdAt).toISOString(),
    refreshedAt: new Date(login.refreshedAt).toISOString(),
    ip: login.ip ?? null,
    userAgent: login.userAgent ?? null,
    upgraded: login.upgraded,
    current: login.fam === currentFam,
  };
}
