import type { GateDispatcher, LoggerFactory, UdpKeyring } from '@portcullis/core';
import { positiveInteger } from '@portcullis/core/transport';

/**
 * Options of {@link createUdpTransport}. Only `dispatcher` is required.
 *
 * @example
 * ```ts
 * const options: UdpTransportOptions = { dispatcher, maxDatagramBytes: 1200 };
 * ```
 */
export interface UdpTransportOptions {
  /** Routes requests to gates and checks each datagram's `token` or session (`@portcullis/core`). */
  readonly dispatcher: GateDispatcher;
  /**
   * The UDP keys of sessions (`container.resolve(UdpKeyring)`), which authenticated
   * datagrams are checked with. Without it every authenticated datagram is dropped
   * (counted as `mac`) and only the JSON form is served.
   */
  readonly keyring?: UdpKeyring;
  /**
   * Drop, without a reply, every JSON datagram that carries a `token` (counted as
   * `bearer`): sessions must use the authenticated form, so no bearer token travels
   * in clear. JSON datagrams without a `token` (unshielded gates) are still served.
   * Default false.
   */
  readonly requireMac?: boolean;
  /**
   * Sessions whose replay window and reply counter this process keeps at once; past
   * it the least recently used is forgotten (counted in `replayWindowsEvicted`).
   * Default 65,536 (about 39 MB at the measured ~600 bytes each).
   */
  readonly maxReplayWindows?: number;
  /** Larger datagrams are dropped unread. Default 1,200 bytes (fits any path MTU without fragmenting). */
  readonly maxDatagramBytes?: number;
  /**
   * Anti-amplification: a reply to a JSON datagram is at most this many times the
   * size of its request, whatever its `token` (a source address is spoofable, and
   * anyone can sign up for a token). An error reply that does not fit is sent without
   * its message text; any other reply that does not fit is dropped (pad the
   * request). Replies to authenticated datagrams are exempt: their MAC proves the
   * sender holds the session's key. Default 1.
   */
  readonly amplificationFactor?: number;
  /** Datagrams being answered at once; beyond this new ones are dropped. Default 1,024. */
  readonly maxPendingRequests?: number;
  /** `udp4` (default) or `udp6`. */
  readonly type?: 'udp4' | 'udp6';
  readonly loggers?: LoggerFactory;
}

/** The options with every default applied. */
export interface ResolvedUdpOptions extends Required<Omit<UdpTransportOptions, 'loggers' | 'keyring'>> {
  readonly loggers: LoggerFactory | undefined;
  readonly keyring: UdpKeyring | undefined;
}

/**
 * Default largest datagram accepted: 1,200 bytes.
 *
 * @example
 * ```ts
 * createUdpTransport({ dispatcher, maxDatagramBytes: DEFAULT_MAX_DATAGRAM_BYTES / 2 });
 * ```
 */
export const DEFAULT_MAX_DATAGRAM_BYTES = 1200;

/**
 * Applies the defaults and checks the numbers.
 *
 * @throws TypeError for a limit that is not a positive number.
 * @example
 * ```ts
 * resolveUdpOptions({ dispatcher }).maxDatagramBytes; // 1200
 * ```
 */
export function resolveUdpOptions(options: UdpTransportOptions): ResolvedUdpOptions {
  const amplificationFactor = options.amplificationFactor ?? 1;
  if (!(amplificationFactor > 0) || !Number.isFinite(amplificationFactor)) {
    throw new TypeError(`amplificationFactor must be a positive number, got ${amplificationFactor}`);
  }
  return {
    dispatcher: options.dispatcher,
    keyring: options.keyring,
    requireMac: options.requireMac ?? false,
    maxReplayWindows: positiveInteger('maxReplayWindows', options.maxReplayWindows ?? 65_536),
    maxDatagramBytes: positiveInteger('maxDatagramBytes', options.maxDatagramBytes ?? DEFAULT_MAX_DATAGRAM_BYTES),
    amplificationFactor,
    maxPendingRequests: positiveInteger('maxPendingRequests', options.maxPendingRequests ?? 1024),
    type: options.type ?? 'udp4',
    loggers: options.loggers,
  };
}
