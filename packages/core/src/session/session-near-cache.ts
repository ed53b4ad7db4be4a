/**
 * The per-process near cache of validated sessions: the per-message check is a Map lookup
 * and a clock read. Entries live at most `session:near-cache-seconds` (at least four fifths
 * of it) and never past the token's expiry; revocation events drop them.
 */
import type { Principal } from '../contracts/principal.js';

/** Share of the TTL by which an entry's lifetime is randomly shortened. */
const JITTER = 0.2;

interface NearEntry {
  readonly principal: Principal;
  readonly until: number;
}

/**
 * A bounded map of session token → principal with a short lifetime.
 *
 * @example
 * ```ts
 * const near = new SessionNearCache(5000);
 * near.put(token, principal, accessExpiresMs);
 * near.get(token); // principal, for at most 5 s
 * ```
 */
export class SessionNearCache {
  private readonly entries = new Map<string, NearEntry>();
  private nextSweep = 0;

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries = 100_000,
  ) {}

  get enabled(): boolean {
    return this.ttlMs > 0;
  }

  /** How many entries are held, expired ones not yet swept included. */
  get size(): number {
    return this.entries.size;
  }

  get(token: string): Principal | undefined {
    const entry = this.entries.get(token);
    if (entry === undefined) return undefined;
    if (Date.now() < entry.until) return entry.principal;
    this.entries.delete(token);
    return undefined;
  }

  put(token: string, principal: Principal, expiresAtMs: number): void {
    if (this.ttlMs <= 0) return;
    const now = Date.now();
    if (now >= this.nextSweep || this.entries.size >= this.maxEntries) this.sweep(now);
    // Lifetimes are spread over the last fifth of the TTL so sessions validated together (a
    // reconnect wave) do not all expire, and go back to the store, in the same instant.
    const ttlMs = this.ttlMs * (1 - JITTER * Math.random());
    this.entries.set(token, { principal, until: Math.min(now + ttlMs, expiresAtMs) });
  }

  drop(token: string): void {
    this.entries.delete(token);
  }

  dropPrincipal(principalId: string): void {
    for (const [token, entry] of this.entries) {
      if (entry.principal.id === principalId) this.entries.delete(token);
    }
  }

  clear(): void {
    this.entries.clear();
  }

  /**
   * Drops expired entries, at most once per TTL (from `put`), so entries nobody reads
   * again do not stay until the cap; clears everything if the cap is still reached.
   */
  private sweep(now: number): void {
    this.nextSweep = now + this.ttlMs;
    for (const [token, entry] of this.entries) {
      if (now >= entry.until) this.entries.delete(token);
    }
    if (this.entries.size >= this.maxEntries) this.entries.clear();
  }
}
