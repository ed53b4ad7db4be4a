/**
 * The stored shape of a cache value. It is keyv's own envelope (`{ value, expires }`), so
 * entries written with raw Redis commands (SET NX, MULTI) read back through keyv and the
 * reverse.
 */
import type { Deserialize, Serialize } from 'keyv';

/** keyv's envelope: the value and its absolute expiry in epoch milliseconds. */
export interface CacheEntry<T = unknown> {
  value: T;
  expires?: number;
}

/**
 * Serialises a value with its expiry, as keyv would.
 *
 * @example
 * ```ts
 * await client.set(key, encodeEntry(true, 60_000), { PX: 60_000, NX: true });
 * ```
 */
export function encodeEntry(value: unknown, ttlMs: number, now = Date.now()): string {
  return JSON.stringify({ value, expires: now + ttlMs });
}

/**
 * Reads a stored envelope; undefined for a missing, expired or unreadable one.
 *
 * @example
 * ```ts
 * const record = decodeEntry<SessionRecord>(await client.getDel(key));
 * ```
 */
export function decodeEntry<T>(raw: string | null | undefined, now = Date.now()): T | undefined {
  if (typeof raw !== 'string') return undefined;
  let entry: unknown;
  try {
    entry = JSON.parse(raw);
  } catch {
    return undefined;
  }
  if (!entry || typeof entry !== 'object' || !('value' in entry)) return undefined;
  const { value, expires } = entry as CacheEntry<T>;
  if (typeof expires === 'number' && now > expires) return undefined;
  return value;
}

/** keyv `serialize` writing exactly {@link encodeEntry}'s format. */
export const serializeEntry: Serialize = (data) => JSON.stringify(data);

/** keyv `deserialize` for {@link serializeEntry}'s format. */
export const deserializeEntry: Deserialize = (text) => JSON.parse(text);
