import type { GateDispatcher, LoggerFactory } from '@portcullis/core';
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
  /** Routes requests to gates and checks each datagram's `token` (`@portcullis/core`). */
  readonly dispatcher: GateDispatcher;
  /** Larger datagrams are dropped unread. Default 1,200 bytes (fits any path MTU without fragmenting). */
  readonly maxDatagramBytes?: number;
  /**
   * Anti-amplification: a reply to a sender whose `token` does not authenticate is
   * at most this many times the size of its request. An error reply that does not
   * fit is sent without its message text; any other reply that does not fit is
   * dropped (pad the request). Default 1.
   */
  readonly amplificationFactor?: number;
  /** Datagrams being answered at once; beyond this new ones are dropped. Default 1,024. */
  readonly maxPendingRequests?: number;
  /** `udp4` (default) or `udp6`. */
  readonly type?: 'udp4' | 'udp6';
  readonly loggers?: LoggerFactory;
}

/** The options with every default applied. */
export interface ResolvedUdpOptions extends Required<Omit<UdpTransportOptions, 'loggers'>> {
  readonly loggers: LoggerFactory | undefined;
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
    maxDatagramBytes: positiveInteger('maxDatagramBytes', options.maxDatagramBytes ?? DEFAULT_MAX_DATAGRAM_BYTES),
    amplificationFactor,
    maxPendingRequests: positiveInteger('maxPendingRequests', options.maxPendingRequests ?? 1024),
    type: options.type ?? 'udp4',
    loggers: options.loggers,
  };
}
