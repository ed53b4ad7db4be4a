/**
 * The example game server, as a function: configuration in, an HTTP server and
 * its container out. The real-time `/game` portal (WebSocket, TCP, UDP) attaches
 * to the same container and HTTP server.
 */
import 'reflect-metadata';
import { createServer, type Server, type ServerOptions } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ACCOUNT_STORE, consoleLoggerFactory, describeError, loadConfig, type LoggerFactory, type PortcullisConfig } from '@portcullis/core';
import { createPortcullisApp } from '@portcullis/express';
import type { Express } from 'express';
import type { DependencyContainer } from 'tsyringe';
import { ADMIN_ACCOUNTS, grantAdmins } from './admin-users.js';
import { ApiController } from './api-controller.js';
import { GameAuthController } from './game-auth-controller.js';
import { createPortcullisContainer } from './portcullis-container.js';

/** What {@link createGameServer} needs; `main.ts` fills it from the environment. */
export interface GameServerOptions {
  /** Configuration; default `loadConfig()` (svc.config.* and `SVC__…` variables). */
  readonly config?: PortcullisConfig;
  /** HTTP (and WebSocket) port; 0 picks a free one. Default 3000. */
  readonly port?: number;
  /** Address to listen on. Default 127.0.0.1. */
  readonly host?: string;
  /** Usernames (lower-cased) of the operator's admin accounts (`ADMIN_USERS`). */
  readonly adminUsers?: ReadonlySet<string>;
  /** bcrypt hash of the admins' password (`ADMIN_PASSWORD_HASH`); without it nobody is admin. */
  readonly adminPasswordHash?: string;
  /** express `trust proxy`; default false. */
  readonly trustProxy?: boolean | number | string | string[];
  /**
   * A socket that has not sent a complete request (headers and body) this long after
   * it started is closed (node's `requestTimeout` and `headersTimeout`). Default 30,000 ms.
   */
  readonly requestTimeoutMs?: number;
  readonly loggers?: LoggerFactory;
}

/** How long a socket may take to send one complete request: 30 s. */
const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;

/**
 * node's defaults keep a socket that sends half a header for 60 s and half a body for 300 s,
 * checked every 30 s: here both end after `requestTimeoutMs`, checked at least every second.
 */
function httpServerTimeouts(requestTimeoutMs: number): ServerOptions {
  return {
    requestTimeout: requestTimeoutMs,
    headersTimeout: requestTimeoutMs,
    connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(requestTimeoutMs / 4))),
  };
}

/** A built, not yet listening, game server. */
export interface GameServer {
  readonly config: PortcullisConfig;
  readonly container: DependencyContainer;
  readonly app: Express;
  /** The HTTP server; transports attach their WebSocket upgrade handler to it. */
  readonly httpServer: Server;
  /** Starts listening; answers the HTTP base URL. */
  listen(): Promise<{ readonly http: string }>;
  /** Stops listening and closes the stores. */
  close(): Promise<void>;
}

/**
 * Builds the game server: `/auth` (GameAuthController), `/api/me`, `/api/token`, `/api/admin`.
 *
 * @example
 * ```ts
 * const server = await createGameServer({ port: 0, adminUsers: new Set(['ada']), adminPasswordHash: process.env.ADMIN_PASSWORD_HASH });
 * const { http } = await server.listen();
 * ```
 */
export async function createGameServer(options: GameServerOptions = {}): Promise<GameServer> {
  const config = options.config ?? loadConfig();
  const loggers = options.loggers ?? consoleLoggerFactory;
  const { container, close: closeStores } = await createPortcullisContainer(config, loggers);
  const log = loggers.create('game-server');
  try {
    const admins = await grantAdmins(container.resolve(ACCOUNT_STORE), options.adminUsers ?? new Set(), options.adminPasswordHash, log);
    container.register(ADMIN_ACCOUNTS, { useValue: admins });
  } catch (error) {
    await closeStores();
    throw error;
  }
  const app = createPortcullisApp(container, { controllers: [GameAuthController, ApiController], trustProxy: options.trustProxy ?? false });
  const httpServer = createServer(httpServerTimeouts(options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS), app);
  return {
    config,
    container,
    app,
    httpServer,
    listen: () =>
      new Promise((resolve, reject) => {
        httpServer.once('error', reject);
        httpServer.listen(options.port ?? 3000, options.host ?? '127.0.0.1', () => {
          httpServer.off('error', reject);
          // Without a listener, an 'error' after listen (EMFILE on accept) would end the process.
          httpServer.on('error', (error) => log.error('HTTP server error', describeError(error)));
          const { address, port, family } = httpServer.address() as AddressInfo;
          resolve({ http: `http://${family === 'IPv6' ? `[${address}]` : address}:${port}` });
        });
      }),
    close: async () => {
      httpServer.closeAllConnections();
      await new Promise<void>((resolve) => httpServer.close(() => resolve()));
      await closeStores();
    },
  };
}
