/**
 * The one JSON reader of every transport: text as is, bytes only when they are
 * valid UTF-8.
 */

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Parses one JSON message of any transport: text, or bytes that must be valid UTF-8.
 * Undefined when it is not (JSON itself never gives undefined).
 *
 * @example
 * ```ts
 * const raw = parseJsonFrame(datagram);
 * if (raw === undefined) return; // garbage
 * ```
 */
export function parseJsonFrame(message: string | Uint8Array): unknown {
  try {
    return JSON.parse(typeof message === 'string' ? message : strictUtf8.decode(message));
  } catch {
    return undefined;
  }
}
