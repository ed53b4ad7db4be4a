/**
 * What a refresh token leaves behind once used: a marker saying when (so a second use
 * can be told apart from theft) and, within the reuse grace, its successor sealed under
 * the used token itself, so only someone who holds that token can read it back and the
 * cache alone never yields a live credential.
 */
import { createHash } from 'node:crypto';
import type { RefreshResult, UpgradeResult } from '../contracts/sessions.js';
import type { CacheStore } from '../store/cache-store.js';
import { openWith, sealUnder } from './token-seal.js';

/** How long a repeated refresh waits, at most, for the first one to finish writing its successor. */
const SUCCESSOR_WAIT_MS = 2000;
const SUCCESSOR_POLL_MS = 15;

/** `used-session-refresh` namespace: one used session refresh token. */
export interface UsedSessionRefresh {
  /** Epoch ms of the first use. */
  readonly usedAt: number;
  readonly principalId?: string;
  /** Key of the successor's refresh token; absent while the first use is still rotating. */
  readonly next?: string;
}

type SealedResult =
  | { readonly kind: 'login'; readonly pair: { readonly accessToken: string; readonly refreshToken: string; readonly familyId: string; readonly accessExpiresAt: number; readonly refreshExpiresAt: number } }
  | { readonly kind: 'session'; readonly session: Omit<UpgradeResult, 'accessExpiration' | 'refreshExpiration'> & { readonly accessExpiration: number; readonly refreshExpiration: number } };

/**
 * The store side of refresh-token reuse, for both kinds of refresh token.
 *
 * @example
 * ```ts
 * const reuse = new RefreshReuse(cache, 10_000);
 * if (reuse.withinGrace(marker.usedAt)) return (await reuse.successor(token)) ?? refuse();
 * ```
 */
export class RefreshReuse {
  constructor(
    private readonly cache: CacheStore,
    /** `refresh-reuse-grace-seconds` in ms. */
    readonly graceMs: number,
  ) {}

  /** True while a repeated use of a token first used at `usedAt` answers the same successor. */
  withinGrace(usedAt: number): boolean {
    return this.graceMs > 0 && Date.now() - usedAt <= this.graceMs;
  }

  /** Marks a session refresh token used; true for the one caller that did (it rotates). */
  claimSession(key: string, ttlMs: number): Promise<boolean> {
    return this.cache.setIfAbsent('used-session-refresh', key, { usedAt: Date.now() } satisfies UsedSessionRefresh, ttlMs);
  }

  /** Undoes {@link claimSession} when the token turned out unknown or the rotation failed. */
  async releaseSession(key: string): Promise<void> {
    await this.cache.delete('used-session-refresh', key);
  }

  /** Completes the marker of a used session refresh token with its successor. */
  async recordSession(key: string, marker: UsedSessionRefresh, ttlMs: number): Promise<void> {
    await this.cache.set('used-session-refresh', key, marker, ttlMs);
  }

  /** The marker of a session refresh token, waiting (briefly) for a rotation in flight to name its successor. */
  async usedSession(key: string): Promise<UsedSessionRefresh | undefined> {
    return this.poll(async () => {
      const marker = await this.cache.get<UsedSessionRefresh>('used-session-refresh', key);
      return marker === undefined || marker.next !== undefined ? { done: marker } : undefined;
    });
  }

  /** Keeps the successor of a used refresh token for the grace, sealed under that token. */
  async keepSuccessor(usedToken: string, result: RefreshResult): Promise<void> {
    if (this.graceMs === 0) return;
    await this.cache.set('refresh-successor', digest(usedToken), sealUnder('refresh successor', usedToken, JSON.stringify(toSealed(result))), this.graceMs);
  }

  /** The successor kept for a used refresh token, waiting (briefly) for a refresh in flight to keep it. */
  async successor(usedToken: string): Promise<RefreshResult | undefined> {
    const sealed = await this.poll(async () => {
      const value = await this.cache.get<string>('refresh-successor', digest(usedToken));
      return value === undefined ? undefined : { done: value };
    });
    const text = sealed === undefined ? undefined : openWith('refresh successor', usedToken, sealed);
    return text === undefined ? undefined : fromSealed(JSON.parse(text) as SealedResult);
  }

  private async poll<T>(read: () => Promise<{ done: T } | undefined>): Promise<T | undefined> {
    const deadline = Date.now() + SUCCESSOR_WAIT_MS;
    for (;;) {
      const answer = await read();
      if (answer !== undefined) return answer.done;
      if (Date.now() >= deadline) return undefined;
      await new Promise((resolve) => setTimeout(resolve, SUCCESSOR_POLL_MS));
    }
  }
}

function digest(token: string): string {
  return createHash('sha256').update(token).digest('base64url');
}

function toSealed(result: RefreshResult): SealedResult {
  if (result.kind === 'login') {
    const { accessToken, refreshToken, familyId, accessExpiresAt, refreshExpiresAt } = result.pair;
    return { kind: 'login', pair: { accessToken, refreshToken, familyId, accessExpiresAt: accessExpiresAt.getTime(), refreshExpiresAt: refreshExpiresAt.getTime() } };
  }
  // udpKey too: an answer within the grace is identical to the first, field for field.
  const { accessToken, refreshToken, accessExpiration, refreshExpiration, principal, udpKey } = result.session;
  const session = { accessToken, refreshToken, principal, accessExpiration: accessExpiration.getTime(), refreshExpiration: refreshExpiration.getTime() };
  return { kind: 'session', session: udpKey === undefined ? session : { ...session, udpKey } };
}

function fromSealed(sealed: SealedResult): RefreshResult {
  if (sealed.kind === 'login') {
    const { accessExpiresAt, refreshExpiresAt, ...rest } = sealed.pair;
    return { kind: 'login', pair: Object.freeze({ ...rest, accessExpiresAt: new Date(accessExpiresAt), refreshExpiresAt: new Date(refreshExpiresAt) }) };
  }
  const { accessExpiration, refreshExpiration, ...rest } = sealed.session;
  return { kind: 'session', session: Object.freeze({ ...rest, accessExpiration: new Date(accessExpiration), refreshExpiration: new Date(refreshExpiration) }) };
}
