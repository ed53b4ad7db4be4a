/**
 * One HTTP + WebSocket server on 127.0.0.1 over a core test stack: the `/auth` routes of
 * `controller` and the stack's portals, as a game server mounts them.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createPortcullisApp, type ControllerClass } from '@portcullis/express';
import type { TestStack } from '@portcullis/core/testing';
import { silentLoggerFactory } from '@portcullis/core';
import { attachWebSocketTransport } from '@portcullis/ws';

export interface StackServer {
  readonly server: Server;
  readonly baseUrl: string;
  /** Closes the WebSocket transport and the HTTP server (not the stack). */
  close(): Promise<void>;
}

/**
 * @example
 * ```ts
 * const served = await serveStack(stack, MatchAuthController);
 * const client = new PortcullisClient({ baseUrl: served.baseUrl });
 * ```
 */
export async function serveStack(stack: TestStack, controller: ControllerClass): Promise<StackServer> {
  const server = createServer(createPortcullisApp(stack.container, { controllers: [controller] }));
  const transport = attachWebSocketTransport(server, { loggers: silentLoggerFactory, dispatcher: stack.dispatcher, registry: stack.registry });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    server,
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      await transport.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
