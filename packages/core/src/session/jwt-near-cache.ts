/**
 * The per-process near cache of JWT verdicts, for stores that cannot answer without a
 * round trip (Redis): a JWT found not invalidated is trusted for a short while, so a
 * `@JwtShield` request costs a Map lookup instead of an `MGET`. Revocation events drop
 * the entries they name (by `jti`, login family or principal), as they do sessions.
 */
import type { JwtClaims } from '../contracts/tokens.js';

/** Share of the TTL by which an entry's lifetime is randomly shortened. */
const JITTER = 0.2;

interface JwtEntry {
  readonly sub: string;
  readonly fam: string | undefined;
  readonly until: number;
}

/**
 * A bounded map of `jti` → "not invalidated until", indexed by principal and family so an
 * event drops its entries without a scan.
 *
 * @example
 * ```ts
 * const near = new JwtNearCache(5000);
 * if (!(await jwts.isInvalidated(claims))) near.put(claims);
 * near.has(claims.jti); // true for at most 5 s, and never past the JWT's exp
 * ```
 */
export class JwtNearCache {
  private readonly entries = new Map<string, JwtEntry>();
  private readonly bySub = new Map<string, Set<string>>();
  private readonly byFamily = new Map<string, Set<string>>();
  private nextSweep = 0;

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries = 100_000,
  ) {}

  /** How many entries are held, expired ones not yet swept included. */
  get size(): number {
    return this.entries.size;
  }

  /** True while the JWT was found not invalidated and no event has named it since. */
  has(jti: string): boolean {
    const entry = this.entries.get(jti);
    if (entry === undefined) return false;
    if (Date.now() < entry.until) return true;
    this.delete(jti);
    return false;
  }

  put(claims: JwtClaims): void {
    if (this.ttlMs <= 0) return;
    const now = Date.now();
    if (now >= this.nextSweep || this.entries.size >= this.maxEntries) this.sweep(now);
    const until = Math.min(now + this.ttlMs * (1 - JITTER * Math.random()), claims.exp * 1000);
    if (until <= now) return;
    this.delete(claims.jti);
    const fam = typeof claims.fam === 'string' ? claims.fam : undefined;
    this.entries.set(claims.jti, { sub: claims.sub, fam, until });
    index(this.bySub, claims.sub, claims.jti);
    if (fam !== undefined) index(this.byFamily, fam, claims.jti);
  }

  drop(jti: string): void {
    this.delete(jti);
  }

  dropPrincipal(sub: string): void {
    for (const jti of [...(this.bySub.get(sub) ?? [])]) this.delete(jti);
  }

  dropFamily(fam: string): void {
    for (const jti of [...(this.byFamily.get(fam) ?? [])]) this.delete(jti);
  }

  clear(): void {
    this.entries.clear();
    this.bySub.clear();
    this.byFamily.clear();
  }

  private delete(jti: string): void {
    const entry = this.entries.get(jti);
    if (entry === undefined) return;
    this.entries.delete(jti);
    unindex(this.bySub, entry.sub, jti);
    if (entry.fam !== undefined) unindex(this.byFamily, entry.fam, jti);
  }

  /** Drops expired entries, at most once per TTL; clears everything if the cap is still reached. */
  private sweep(now: number): void {
    this.nextSweep = now + this.ttlMs;
    for (const [jti, entry] of this.entries) if (now >= entry.until) this.delete(jti);
    if (this.entries.size >= this.maxEntries) this.clear();
  }
}

function index(map: Map<string, Set<string>>, key: string, jti: string): void {
  let set = map.get(key);
  if (set === undefined) map.set(key, (set = new Set()));
  set.add(jti);
}

function unindex(map: Map<string, Set<string>>, key: string, jti: string): void {
  const set = map.get(key);
  if (set?.delete(jti) && set.size === 0) map.delete(key);
}
