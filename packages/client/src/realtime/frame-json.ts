import { parseJsonFrame } from '@portcullis/protocol';
import type { InboundFrame } from './realtime-transport.js';

/**
 * Reads one inbound message (text, or bytes that must be UTF-8) with the
 * protocol's JSON reader; `undefined` for anything that is not a JSON object
 * (it is dropped rather than breaking the connection).
 *
 * @example
 * ```ts
 * parseFrame('{"id":1,"ok":true,"data":"pong"}'); // { id: 1, ok: true, data: 'pong' }
 * ```
 */
export function parseFrame(message: string | Uint8Array): InboundFrame | undefined {
  const value = parseJsonFrame(message);
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as InboundFrame) : undefined;
}
