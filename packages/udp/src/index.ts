/**
 * @portcullis/udp — the UDP transport: one datagram one request with its own
 * `token`, reply to the sender, size limit, garbage ignored, no amplification.
 */
export { createUdpTransport, UdpTransport, type UdpDropCounts } from './udp-transport.js';
export { DEFAULT_MAX_DATAGRAM_BYTES, type UdpTransportOptions } from './udp-options.js';
