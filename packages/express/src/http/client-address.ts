/**
 * Where a request came from. A leaf: it reads the request and imports nothing
 * else of this package.
 */
import type { Request } from 'express';

/**
 * The client's IP address: `req.ip`, which express derives from
 * `X-Forwarded-For` only as far as the app's `trust proxy` setting allows (by
 * default it is the socket's peer). IPv4-mapped IPv6 addresses are given as IPv4.
 *
 * @example
 * ```ts
 * app.set('trust proxy', 'loopback'); // behind a local reverse proxy
 * clientIp(req); // '203.0.113.7'
 * ```
 */
export function clientIp(req: Request): string | undefined {
  // With no proxy trusted, `req.ip` is the socket's peer: reading it directly saves parsing
  // `X-Forwarded-For` on every request.
  const address = req.app?.get('trust proxy') === false ? req.socket?.remoteAddress : (req.ip ?? req.socket?.remoteAddress);
  if (address === undefined) return undefined;
  return address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address;
}
