/**
 * Starts the real example game server (examples/game-server) in-process with the
 * in-memory store: HTTP + WebSocket on one port, TCP and UDP on their own. It
 * counts the HTTP requests per path as they reach the server, and restarts on
 * the same ports (the in-memory sessions are lost, as after a real restart).
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
  /** Requests that reached the HTTP server, by path, since start (survives restarts). */
  readonly hits: Map<string, number>;
  stop(): Promise<void>;
  /** Starts again on the same ports after `stop()`; `rotateKey` signs with a new key from then on. */
  start(options?: { rotateKey?: boolean }): Promise<void>;
  restart(options?: { rotateKey?: boolean }): Promise<void>;
}

function testConfig(key: string): PortcullisConfig {
  return loadConfig({
    env: {
      SVC__SECURITY__MODE: 'jwt',
      // One key for every start, so a JWT issued before a restart still verifies after it.
      SVC__SECURITY__KEY: key,
      SVC__SECURITY__PASSWORD__WORK_FACTOR: '4',
      SVC__PERSISTENCE__CACHE__PROVIDER: 'inmemory',
    },
    tree: {},
  });
}

const newKey = (): string => randomBytes(32).toString('base64');

/**
 * @example
 * ```ts
 * const server = await startGameServer();
 * const client = new PortcullisClient({ baseUrl: server.baseUrl });
 * ```
 */
export async function startGameServer(options: { beforeListen?: (game: GameServer) => void } = {}): Promise<RunningGameServer> {
  const hits = new Map<string, number>();
  let ports = { http: 0, tcp: 0, udp: 0 };
  let game: GameServer | undefined;
  let realtime: RealtimeServers | undefined;
  let key = newKey();

  const start = async (restart: { rotateKey?: boolean } = {}): Promise<void> => {
    if (restart.rotateKey === true) key = newKey();
    game = await createGameServer({ config: testConfig(key), port: ports.http, host: '127.0.0.1', loggers: silentLoggerFactory });
    game.httpServer.prependListener('request', (req: { url?: string }) => {
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      hits.set(path, (hits.get(path) ?? 0) + 1);
    });
    options.beforeListen?.(game);
    const { http } = await game.listen();
    // One registry for the transports and for the test's pushes (it is not a singleton by default).
    game.container.registerSingleton(ConnectionRegistry);
    realtime = await startRealtime(game.container, game.httpServer, { host: '127.0.0.1', tcpPort: ports.tcp, udpPort: ports.udp });
    ports = { http: Number(new URL(http).port), tcp: realtime.addresses.tcpPort, udp: realtime.addresses.udpPort };
  };
  const stop = async (): Promise<void> => {
    await realtime?.close();
    await game?.close();
    realtime = undefined;
    game = undefined;
  };

  await start();
  return {
    get baseUrl() { return `http://127.0.0.1:${ports.http}`; },
    get port() { return ports.http; },
    get tcpPort() { return ports.tcp; },
    get udpPort() { return ports.udp; },
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
