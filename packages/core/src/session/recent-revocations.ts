/** Revocations remembered, at most; a read that overlapped more keeps nothing it answered. */
const MAX_REMEMBERED = 1024;

interface Remembered {
  readonly generation: number;
  readonly sessionKeys: ReadonlySet<string>;
  readonly principalId: string | undefined;
}

/**
 * The session revocations of the last moments, numbered, so that a store read which
 * overlapped some keeps its answers for the sessions they did not name. A revocation
 * may have reached the store before or after a read that was in flight when its event
 * arrived, so that read's answer for a session it names may be the one before it; the
 * answers for every other session are as good as if no event had arrived. Without
 * this, on a busy server (a logout every second, store reads taking a second while it
 * is behind) almost no read would keep anything.
 *
 * The last 1,024 revocations are remembered (refreshes count: each revokes the access
 * token it replaced). A gap (events may have been missed), or a revocation already
 * forgotten, makes every read that began before it keep nothing.
 *
 * @example
 * ```ts
 * const recent = new RecentRevocations();
 * const since = recent.generation;
 * const record = await pairs.findAccess(token);
 * if (!recent.mayHaveRevoked(since, sessionKey(token), record.principal.id)) near.put(token, record.principal, record.accessExpires);
 * ```
 */
export class RecentRevocations {
  private current = 0;
  /** A read that began before this generation cannot tell what it overlapped. */
  private floor = 0;
  private readonly remembered: Remembered[] = [];

  /** Counts the revocations and gaps so far; a read notes it when it begins. */
  get generation(): number {
    return this.current;
  }

  /** A revocation of these sessions, or of every session of the principal. */
  revoked(sessionKeys: readonly string[], principalId: string | undefined): void {
    this.current++;
    this.remembered.push({ generation: this.current, sessionKeys: new Set(sessionKeys), principalId });
    if (this.remembered.length > MAX_REMEMBERED) this.floor = this.remembered.shift()!.generation;
  }

  /** Events may have been missed: every read in flight keeps nothing. */
  gap(): void {
    this.current++;
    this.floor = this.current;
    this.remembered.length = 0;
  }

  /**
   * True when a revocation since `since` (a {@link generation} noted when the read
   * began) named this session (by its store key) or its principal, or when that
   * cannot be told.
   */
  mayHaveRevoked(since: number, sessionKey: string, principalId: string): boolean {
    if (since === this.current) return false;
    if (since < this.floor) return true;
    for (let i = this.remembered.length - 1; i >= 0 && this.remembered[i]!.generation > since; i--) {
      const event = this.remembered[i]!;
      if (event.principalId === principalId || event.sessionKeys.has(sessionKey)) return true;
    }
    return false;
  }
}
