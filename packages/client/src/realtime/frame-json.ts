import type { InboundFrame } from './realtime-transport.js';

/**
 * Parses one inbound message; answers `undefined` for anything that is not a
 * JSON object (it is dropped rather than breaking the connection).
 *
 * @example
 * ```ts
 * parseFrame('{"id":1,"ok":true,"data":"pong"}'); // { id: 1, ok: true, data: 'pong' }
 * ```
 */
export function parseFrame(text: string): InboundFrame | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as InboundFrame) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Reads an auth answer `{"type":"auth","ok":…}`; `undefined` when `frame` is something else.
 *
 * @example
 * ```ts
 * authAnswer({ type: 'auth', ok: false, error: { code: 'unauthorized', message: '…' } });
 * ```
 */
export function authAnswer(frame: InboundFrame): { ok: boolean; frame: InboundFrame } | undefined {
  return frame['type'] === 'auth' && typeof frame['ok'] === 'boolean' ? { ok: frame['ok'], frame } : undefined;
}
