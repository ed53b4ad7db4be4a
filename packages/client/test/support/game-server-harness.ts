/**
 * Starts the real example game server (examples/game-server) in-process, with the
 * in-memory store (default) or Redis: HTTP + WebSocket on one port, TCP and UDP on
 * their own. It counts the HTTP requests per path as they reach the server, and
 * restarts on the same ports. With the in-memory store a restart loses everything,
 * as a real one does: sessions, accounts and revocations — and the new store's epoch
 * refuses every JWT issued before it (see packages/core/src/store/store-epoch.ts).
 */
import { randomBytes } from 'node:crypto';
import { ConnectionRegistry, loadConfig, silentLoggerFactory, type PortcullisConfig } from '@portcullis/core';
import { createGameServer, type GameServer } from '../../../../examples/game-server/src/game-server.js';
import { startRealtime, type RealtimeServers } from '../../../../examples/game-server/src/realtime.js';

export interface RunningGameServer {
  readonly baseUrl: string;
  readonly port: number;
  readonly tcpPort: number;
  readonly udpPort: number;
  /** The connection registry the running server's transports use (server-side pushes). */
  readonly registry: ConnectionRegistry;
  /** The running UDP transport (its drop counters and replay windows). */
  readonly udp: RealtimeServers['udp'];
  /** Requests that reached the HTTP server, by path, since start (survives restarts). */
  readonly hits: Map<string, number>;
  stop(): Promise<void>;
  /** Starts again on the same ports after `stop()`; `rotateKey` signs with a new key from then on. */
  start(options?: { rotateKey?: boolean }): Promise<void>;
  restart(options?: { rotateKey?: boolean }): Promise<void>;
}

/** Where the server keeps sessions, revocations and accounts. */
export type GameServerStore = { readonly provider: 'inmemory' } | { readonly provider: 'redis'; readonly url: string };

function testConfig(key: string, store: GameServerStore): PortcullisConfig {
  return loadConfig({
    env: {
      SVC__SECURITY__MODE: 'jwt',
      // One key for every start, so a JWT issued before a restart still verifies after it
      // (and is refused, if it is, for what the store says, not for its signature).
      SVC__SECURITY__KEY: key,
      SVC__SECURITY__PASSWORD__WORK_FACTOR: '4',
      SVC__PERSISTENCE__CACHE__PROVIDER: store.provider,
      ...(store.provider === 'redis' ? { SVC__PERSISTENCE__CACHE__URL: store.url } : {}),
    },
    tree: {},
  });
}

/**
 * Waits until the wall clock is in a later second than `ms`. A JWT's `iat` and the
 * store epoch have one-second resolution, so without this a restart within the second
 * of a login would let that login's JWTs through by luck; a real restart takes longer.
 */
async function untilSecondAfter(ms: number): Promise<void> {
  const next = (Math.floor(ms / 1000) + 1) * 1000;
  while (Date.now() < next) await new Promise((resolve) => setTimeout(resolve, next - Date.now() + 5));
}

const newKey = (): string => randomBytes(32).toString('base64');

/**
 * @example
 * ```ts
 * const server = await startGameServer();
 * const client = new PortcullisClient({ baseUrl: server.baseUrl });
 * ```
 */
export async function startGameServer(
  options: { beforeListen?: (game: GameServer) => void; store?: GameServerStore; udpRequireMac?: boolean } = {},
): Promise<RunningGameServer> {
  const store = options.store ?? { provider: 'inmemory' };
  const hits = new Map<string, number>();
  let ports = { http: 0, tcp: 0, udp: 0 };
  let game: GameServer | undefined;
  let realtime: RealtimeServers | undefined;
  let key = newKey();
  let stoppedAt: number | undefined;

  const start = async (restart: { rotateKey?: boolean } = {}): Promise<void> => {
    if (restart.rotateKey === true) key = newKey();
    if (stoppedAt !== undefined && store.provider === 'inmemory') await untilSecondAfter(stoppedAt);
    game = await createGameServer({ config: testConfig(key, store), port: ports.http, host: '127.0.0.1', loggers: silentLoggerFactory });
    game.httpServer.prependListener('request', (req: { url?: string }) => {
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      hits.set(path, (hits.get(path) ?? 0) + 1);
    });
    options.beforeListen?.(game);
    const { http } = await game.listen();
    // One registry for the transports and for the test's pushes (it is not a singleton by default).
    game.container.registerSingleton(ConnectionRegistry);
    realtime = await startRealtime(game.container, game.httpServer, { host: '127.0.0.1', tcpPort: ports.tcp, udpPort: ports.udp }, { udpRequireMac: options.udpRequireMac ?? false });
    ports = { http: Number(new URL(http).port), tcp: realtime.addresses.tcpPort, udp: realtime.addresses.udpPort };
  };
  const stop = async (): Promise<void> => {
    await realtime?.close();
    await game?.close();
    realtime = undefined;
    game = undefined;
    stoppedAt = Date.now();
  };

  await start();
  return {
    get baseUrl() { return `http://127.0.0.1:${ports.http}`; },
    get port() { return ports.http; },
    get tcpPort() { return ports.tcp; },
    get udpPort() { return ports.udp; },
    get udp() {
      if (realtime === undefined) throw new Error('the game server is stopped');
      return realtime.udp;
    },
    get registry() {
      if (game === undefined) throw new Error('the game server is stopped');
      return game.container.resolve(ConnectionRegistry);
    },
    hits,
    stop,
    start,
    restart: async (restartOptions) => { await stop(); await start(restartOptions); },
  };
}

let counter = 0;

/** A fresh account's credentials (no collisions between tests or runs). */
export function newAccount(prefix = 'p'): { username: string; email: string; password: string } {
  const username = `${prefix}${process.pid}x${++counter}x${randomBytes(3).toString('hex')}`;
  return { username, email: `${username}@example.com`, password: `pw-${randomBytes(8).toString('hex')}` };
}
