/**
 * Caller helpers: who a request acts for and where it came from.
 */
import type { Request } from 'express';
import { getPrincipal } from './request-auth.js';

/**
 * The principal id of the request (`sub`, or the name-identifier claim when
 * inbound claims are mapped); undefined on an open route or without a principal.
 *
 * @example
 * ```ts
 * @JwtShield @Get('/me') me(req: Request) { return { id: principalId(req) }; }
 * ```
 */
export function principalId(req: Request): string | undefined {
  return getPrincipal(req)?.id;
}

/**
 * The identity name of the request's principal (`jwt:name-claim`, otherwise the
 * `name` claim); undefined when there is none.
 *
 * @example
 * ```ts
 * res.json({ hello: principalName(req) ?? 'stranger' });
 * ```
 */
export function principalName(req: Request): string | undefined {
  return getPrincipal(req)?.name;
}

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
  const address = req.ip ?? req.socket?.remoteAddress;
  if (address === undefined) return undefined;
  return address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address;
}
