/**
 * @portcullis/tcp — the TCP transport: length-prefixed JSON frames on
 * `node:net`, auth frame first, shields checked by core per request.
 */
export { createTcpTransport, TcpTransport } from './tcp-transport.js';
export { DEFAULT_AUTH_TIMEOUT_MS, type TcpTransportOptions } from './tcp-options.js';
