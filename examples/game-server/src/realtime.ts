/**
 * Attaches the three real-time transports of the example to a configured
 * container: WebSocket on the HTTP server's `/ws`, TCP on `TCP_PORT` [3001],
 * UDP on `UDP_PORT` [3002], all on `HOST` [127.0.0.1]. `UDP_REQUIRE_MAC=true`
 * drops UDP datagrams that carry a bearer token.
 */
import type { Server } from 'node:http';
import { ConnectionRegistry, GateDispatcher, LOGGER_FACTORY, UdpKeyring, consoleLoggerFactory, type LoggerFactory } from '@portcullis/core';
import { createTcpTransport, type TcpTransport } from '@portcullis/tcp';
import { createUdpTransport, type UdpTransport } from '@portcullis/udp';
import { attachWebSocketTransport, type WebSocketTransport } from '@portcullis/ws';
import type { DependencyContainer } from 'tsyringe';
import { GamePortal } from './game.portal.js';

/** Where the socket transports listen. */
export interface RealtimeAddresses {
  readonly host: string;
  readonly tcpPort: number;
  readonly udpPort: number;
}

/** The running transports. */
export interface RealtimeServers {
  readonly ws: WebSocketTransport;
  readonly tcp: TcpTransport;
  readonly udp: UdpTransport;
  /** Actual bound ports (differ from the requested ones when 0 was asked for). */
  readonly addresses: RealtimeAddresses;
  close(): Promise<void>;
}

/**
 * Reads `HOST`, `TCP_PORT` and `UDP_PORT` with the example's defaults.
 *
 * @throws TypeError for a port that is not an integer from 0 to 65535.
 * @example
 * ```ts
 * realtimeAddressesFromEnv(process.env); // { host: '127.0.0.1', tcpPort: 3001, udpPort: 3002 }
 * ```
 */
export function realtimeAddressesFromEnv(env: Record<string, string | undefined>): RealtimeAddresses {
  return { host: env.HOST || '127.0.0.1', tcpPort: portFromEnv('TCP_PORT', env.TCP_PORT, 3001), udpPort: portFromEnv('UDP_PORT', env.UDP_PORT, 3002) };
}

/**
 * Reads `UDP_REQUIRE_MAC`: `true` drops JSON datagrams that carry a `token`; unset,
 * empty or `false` serves them.
 *
 * @throws TypeError for any other value.
 * @example
 * ```ts
 * udpRequireMacFromEnv({ UDP_REQUIRE_MAC: 'true' }); // true
 * ```
 */
export function udpRequireMacFromEnv(env: Record<string, string | undefined>): boolean {
  const value = env.UDP_REQUIRE_MAC;
  if (value === undefined || value === '' || value === 'false') return false;
  if (value === 'true') return true;
  throw new TypeError(`UDP_REQUIRE_MAC must be true or false, got "${value}"`);
}

/**
 * Registers the `/game` portal and serves it on all three transports. The
 * container must already hold the configuration, signing key, session services
 * and `PORTCULLIS_CONTAINER` (as `createGameServer` sets them up).
 *
 * @example
 * ```ts
 * const http = app.listen(3000, '127.0.0.1');
 * const realtime = await startRealtime(container, http, realtimeAddressesFromEnv(process.env));
 * ```
 */
export async function startRealtime(
  container: DependencyContainer,
  httpServer: Server,
  addresses: RealtimeAddresses,
  options: { readonly udpRequireMac?: boolean } = {},
): Promise<RealtimeServers> {
  const dispatcher = container.resolve(GateDispatcher).register(GamePortal);
  const registry = container.resolve(ConnectionRegistry);
  const loggers: LoggerFactory = container.isRegistered(LOGGER_FACTORY, true) ? container.resolve(LOGGER_FACTORY) : consoleLoggerFactory;
  const ws = attachWebSocketTransport(httpServer, { dispatcher, registry, loggers });
  const tcp = createTcpTransport({ dispatcher, registry, loggers });
  const udp = createUdpTransport({ dispatcher, loggers, keyring: container.resolve(UdpKeyring), requireMac: options.udpRequireMac ?? false });
  try {
    const tcpAddress = await tcp.listen(addresses.tcpPort, addresses.host);
    const udpAddress = await udp.bind(addresses.udpPort, addresses.host);
    return {
      ws,
      tcp,
      udp,
      addresses: { host: addresses.host, tcpPort: tcpAddress.port, udpPort: udpAddress.port },
      async close() {
        await Promise.all([ws.close(), tcp.close(), udp.close()]);
        registry.dispose();
      },
    };
  } catch (error) {
    await Promise.all([ws.close(), tcp.close(), udp.close()]);
    registry.dispose();
    throw error;
  }
}

/**
 * A port number from an environment variable; `fallback` when it is unset or empty.
 *
 * @throws TypeError for a value that is not an integer from 0 to 65535.
 * @example
 * ```ts
 * portFromEnv('PORT', process.env.PORT, 3000);
 * ```
 */
export function portFromEnv(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined || value === '') return fallback;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 0 || parsed > 65535) throw new TypeError(`${name} must be a port number from 0 to 65535, got "${value}"`);
  return parsed;
}
