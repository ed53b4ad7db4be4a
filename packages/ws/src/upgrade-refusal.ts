import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';

/**
 * The statuses an upgrade is refused with: a bad request, a refused credential,
 * a path this transport does not serve, too many connections from one address
 * waiting to authenticate, a store that is down or a server shutting down.
 *
 * @example
 * ```ts
 * const status: UpgradeStatus = 401;
 * ```
 */
export type UpgradeStatus = 400 | 401 | 404 | 429 | 503;

/**
 * Answers an upgrade request with a plain HTTP error instead of `101`, then closes
 * the raw socket. 401 carries `WWW-Authenticate: Bearer`, as on HTTP routes.
 *
 * @example
 * ```ts
 * refuseUpgrade(socket, 401);
 * ```
 */
export function refuseUpgrade(socket: Duplex, status: UpgradeStatus): void {
  if (socket.destroyed) return;
  // The HTTP server removed its own listeners when it handed the socket over for the upgrade.
  if (socket.listenerCount('error') === 0) socket.on('error', () => socket.destroy());
  const lines = [`HTTP/1.1 ${status} ${STATUS_CODES[status]}`, 'Connection: close', 'Content-Length: 0'];
  if (status === 401) lines.push('WWW-Authenticate: Bearer error="invalid_token"');
  if (status === 503 || status === 429) lines.push('Retry-After: 1');
  socket.once('finish', () => socket.destroy());
  socket.end(`${lines.join('\r\n')}\r\n\r\n`);
}
