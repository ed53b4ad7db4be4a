/**
 * Session pairs in the cache: creation, rotation and deletion, each one atomic write, and
 * the per-principal and per-family indexes that let every pair of a principal or of a
 * login be found again. Consumption uses take (GETDEL), so of concurrent callers only one
 * gets a pair.
 */
import type { Principal } from '../contracts/principal.js';
import type { UpgradeResult } from '../contracts/sessions.js';
import type { CacheStore, CacheWrite } from '../store/cache-store.js';
import { frozenPrincipal, type AccessRecord, type RefreshRecord } from './session-record.js';
import { udpSessionIdOfKey, type UdpKeyring } from '../key/udp-keyring.js';
import { newSessionToken, sessionKey } from './session-token.js';
import { openTokenWith, sealTokenUnder } from './token-seal.js';

/** Lifetimes of a session pair in milliseconds. */
export interface SessionLifetimes {
  readonly accessMs: number;
  readonly refreshMs: number;
}

type Index = 'principal-sessions' | 'family-sessions';

/** A new pair's tokens and what is stored about it, before anything is stored. */
export interface PairDraft {
  readonly accessToken: string;
  readonly refreshToken: string;
  /** The keys the two records are stored under. */
  readonly access: string;
  readonly refresh: string;
  /** The UDP `sid` of the access token, hex. */
  readonly sidHex: string;
  /** Epoch ms. */
  readonly accessExpires: number;
  readonly refreshExpires: number;
  /** The access token sealed under the refresh token (kept in the refresh record). */
  readonly sealedAccess: string;
}

/**
 * Reads and writes session pairs, each token under its digest (`sessionKey`): the records
 * link the pair's two keys, never a token. Tokens passed in must already have passed
 * `isSessionToken`. Revocations answer the keys of the access tokens they ended.
 *
 * @example
 * ```ts
 * const pairs = new SessionPairStore(cache, { accessMs: 3_600_000, refreshMs: 604_800_000 }, keyring);
 * const session = await pairs.create(principal, claims.fam);
 * ```
 */
export class SessionPairStore {
  /**
   * @param maxPerPrincipal `session:max-per-principal`: live pairs one principal may hold
   *   (enforced by {@link trimToLimit}).
   */
  constructor(
    private readonly cache: CacheStore,
    private readonly lifetimes: SessionLifetimes,
    private readonly udpKeys: UdpKeyring,
    private readonly maxPerPrincipal = Number.POSITIVE_INFINITY,
  ) {}

  /** Stores a new pair for the principal; `replacing` is a pair consumed by rotation, removed in the same write. */
  async create(principal: Principal, fam: string | undefined, replacing?: { access: string; refresh: string }): Promise<UpgradeResult> {
    const draft = this.draft();
    const { accessRecord, refreshRecord } = this.records(draft, principal, fam);
    const writes: CacheWrite[] = replacing ? [...this.forget(replacing.access), ...this.unindex(principal.id, fam, replacing.refresh)] : [];
    writes.push(
      { kind: 'set', ns: 'session', key: draft.access, value: accessRecord, ttlMs: this.lifetimes.accessMs },
      // The UDP sid names the access record; it lives as long, and every deletion of the record takes it too.
      { kind: 'set', ns: 'udp-session', key: draft.sidHex, value: draft.access, ttlMs: this.lifetimes.accessMs },
      { kind: 'set', ns: 'session-refresh', key: draft.refresh, value: refreshRecord, ttlMs: this.lifetimes.refreshMs },
      { kind: 'add-member', ns: 'principal-sessions', key: principal.id, member: draft.refresh, ttlMs: this.lifetimes.refreshMs },
    );
    if (fam !== undefined) writes.push({ kind: 'add-member', ns: 'family-sessions', key: fam, member: draft.refresh, ttlMs: this.lifetimes.refreshMs });
    await this.cache.write(writes);
    return this.result(draft, principal);
  }

  /** New tokens for a pair, their keys and expiries; nothing is stored yet (see {@link create}). */
  draft(now = Date.now()): PairDraft {
    const accessToken = newSessionToken();
    const refreshToken = newSessionToken();
    const access = sessionKey(accessToken);
    return Object.freeze({
      accessToken,
      refreshToken,
      access,
      refresh: sessionKey(refreshToken),
      sidHex: udpSessionIdOfKey(access).toString('hex'),
      accessExpires: now + this.lifetimes.accessMs,
      refreshExpires: now + this.lifetimes.refreshMs,
      sealedAccess: sealTokenUnder('paired access', refreshToken, accessToken),
    });
  }

  /** The two records of a drafted pair: each links the other's key, never a token. */
  records(draft: PairDraft, principal: Principal, fam: string | undefined): { accessRecord: AccessRecord; refreshRecord: RefreshRecord } {
    const { access, refresh, accessExpires, refreshExpires, sealedAccess } = draft;
    return {
      accessRecord: Object.freeze(fam === undefined ? { principal, refresh, accessExpires } : { principal, refresh, fam, accessExpires }),
      refreshRecord: Object.freeze(fam === undefined ? { principal, access, sealedAccess, refreshExpires } : { principal, access, sealedAccess, fam, refreshExpires }),
    };
  }

  /** What the holder of a drafted pair is handed once it is stored. */
  result(draft: PairDraft, principal: Principal): UpgradeResult {
    const { accessToken, refreshToken } = draft;
    const pair = { accessToken, refreshToken, accessExpiration: new Date(draft.accessExpires), refreshExpiration: new Date(draft.refreshExpires), principal };
    return Object.freeze(this.udpKeys.canDerive ? { ...pair, udpKey: this.udpKeys.keyFor(Buffer.from(draft.sidHex, 'hex')).toString('base64url') } : pair);
  }

  /** How long a pair's access and refresh records live. */
  get lifetimesMs(): SessionLifetimes {
    return this.lifetimes;
  }

  /** `session:max-per-principal`: a principal holding more pairs is trimmed ({@link trimToLimit}). */
  get limit(): number {
    return this.maxPerPrincipal;
  }

  /** The live access record of a session access token. */
  async findAccess(accessToken: string): Promise<AccessRecord | undefined> {
    const record = await this.cache.get<AccessRecord>('session', sessionKey(accessToken));
    if (record) frozenPrincipal(record.principal);
    return record;
  }

  /** {@link findAccess} for many tokens in one store read (one MGET on a single Redis). */
  async findAccessMany(accessTokens: readonly string[]): Promise<Array<AccessRecord | undefined>> {
    const records = (await this.cache.getMany(accessTokens.map((token) => ['session', sessionKey(token)] as const))) as Array<AccessRecord | undefined>;
    for (const record of records) if (record) frozenPrincipal(record.principal);
    return records;
  }

  /** The live access record of a session named by its UDP `sid` (hex). */
  async findAccessBySid(sidHex: string): Promise<AccessRecord | undefined> {
    return (await this.findAccessBySidMany([sidHex]))[0];
  }

  /** The live access records of many sessions named by their UDP `sid`s: two batched reads (the `sid` entries, then their records), in order. */
  async findAccessBySidMany(sidsHex: readonly string[]): Promise<Array<AccessRecord | undefined>> {
    const accessKeys = (await this.cache.getMany(sidsHex.map((sid) => ['udp-session', sid] as const))) as Array<string | undefined>;
    const found: number[] = [];
    accessKeys.forEach((access, i) => typeof access === 'string' && found.push(i));
    const records: Array<AccessRecord | undefined> = sidsHex.map(() => undefined);
    if (found.length === 0) return records;
    const read = (await this.cache.getMany(found.map((i) => ['session', accessKeys[i]!] as const))) as Array<AccessRecord | undefined>;
    found.forEach((at, i) => {
      const record = read[i];
      if (record) frozenPrincipal(record.principal);
      records[at] = record;
    });
    return records;
  }

  /** The live record of a session refresh token, without using it up. */
  async findRefresh(refreshToken: string): Promise<RefreshRecord | undefined> {
    return this.cache.get<RefreshRecord>('session-refresh', sessionKey(refreshToken));
  }

  /**
   * Consumes a refresh token and replaces its pair; undefined when unknown, expired or already
   * used. Answers the replaced access token too (`undefined` for a pair of an older release).
   */
  async rotate(
    refreshToken: string,
  ): Promise<{ session: UpgradeResult; replacedAccessKey: string; replacedAccessToken: string | undefined; fam: string | undefined } | undefined> {
    const refresh = sessionKey(refreshToken);
    const record = await this.cache.take<RefreshRecord>('session-refresh', refresh);
    if (!record) return undefined;
    const session = await this.create(frozenPrincipal(record.principal), record.fam, { access: record.access, refresh });
    const replacedAccessToken = record.sealedAccess === undefined ? undefined : openTokenWith('paired access', refreshToken, record.sealedAccess);
    return { session, replacedAccessKey: record.access, replacedAccessToken, fam: record.fam };
  }

  /** Deletes the pair of an access token; answers the revoked access keys (none when unknown). */
  async revokeByAccess(accessToken: string): Promise<string[]> {
    const access = sessionKey(accessToken);
    const record = await this.cache.take<AccessRecord>('session', access);
    if (!record) return [];
    await this.cache.write([
      { kind: 'delete', ns: 'session-refresh', key: record.refresh },
      { kind: 'delete', ns: 'udp-session', key: udpSessionIdOfKey(access).toString('hex') },
      ...this.unindex(record.principal.id, record.fam, record.refresh),
    ]);
    return [access];
  }

  /** Deletes the pair of a refresh token; answers the revoked access keys (none when unknown). */
  async revokeByRefresh(refreshToken: string): Promise<string[]> {
    return this.revokeByRefreshKey(sessionKey(refreshToken));
  }

  /** Deletes the pair of a refresh token's key; answers the revoked access keys (none when unknown). */
  async revokeByRefreshKey(refresh: string): Promise<string[]> {
    const record = await this.cache.take<RefreshRecord>('session-refresh', refresh);
    if (!record) return [];
    await this.cache.write([...this.forget(record.access), ...this.unindex(record.principal.id, record.fam, refresh)]);
    return [record.access];
  }

  /** Deletes every pair listed in an index (all of a principal, or all of a login family). */
  async revokeIndexed(index: Index, id: string): Promise<string[]> {
    const refreshKeys = await this.cache.takeMembers(index, id);
    if (refreshKeys.length === 0) return [];
    const records = await Promise.all(refreshKeys.map((key) => this.cache.take<RefreshRecord>('session-refresh', key)));
    const writes: CacheWrite[] = [];
    const revoked: string[] = [];
    records.forEach((record, i) => {
      if (!record) return;
      writes.push(...this.forget(record.access), ...this.unindex(record.principal.id, record.fam, refreshKeys[i] as string));
      revoked.push(record.access);
    });
    if (writes.length > 0) await this.cache.write(writes);
    return revoked;
  }

  /**
   * Revokes the principal's least recently made or refreshed pairs beyond `maxPerPrincipal`,
   * and drops index entries whose pair has expired. Answers the revoked access keys.
   * Of concurrent callers each takes what it revokes (GETDEL), so no pair is revoked twice.
   */
  async trimToLimit(principalId: string): Promise<string[]> {
    const keys = await this.cache.members('principal-sessions', principalId);
    if (keys.length <= this.maxPerPrincipal) return [];
    const records = (await this.cache.getMany(keys.map((key) => ['session-refresh', key] as const))) as Array<RefreshRecord | undefined>;
    const live = keys.flatMap((key, i) => (records[i] ? [{ key, record: records[i] }] : []));
    const stale: CacheWrite[] = keys
      .filter((_, i) => !records[i])
      .map((member) => ({ kind: 'remove-member', ns: 'principal-sessions', key: principalId, member }));
    if (stale.length > 0) await this.cache.write(stale);
    if (live.length <= this.maxPerPrincipal) return [];
    // Same lifetime for every pair: the earliest expiry is the least recently made or refreshed.
    live.sort((a, b) => a.record.refreshExpires - b.record.refreshExpires);
    const oldest = live.slice(0, live.length - this.maxPerPrincipal);
    const revoked = await Promise.all(oldest.map(({ key }) => this.revokeByRefreshKey(key)));
    return revoked.flat();
  }

  /** Deletes an access record and the UDP `sid` entry that names it. */
  private forget(access: string): CacheWrite[] {
    return [
      { kind: 'delete', ns: 'session', key: access },
      { kind: 'delete', ns: 'udp-session', key: udpSessionIdOfKey(access).toString('hex') },
    ];
  }

  private unindex(principalId: string, fam: string | undefined, refresh: string): CacheWrite[] {
    const writes: CacheWrite[] = [{ kind: 'remove-member', ns: 'principal-sessions', key: principalId, member: refresh }];
    if (fam !== undefined) writes.push({ kind: 'remove-member', ns: 'family-sessions', key: fam, member: refresh });
    return writes;
  }
}
