/**
 * The TCP transport on `node:net`: 4-byte big-endian length-prefixed UTF-8 JSON
 * frames, the auth frame first within a deadline, shields checked by core per
 * request, replies in request order.
 */
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { consoleLoggerFactory, describeError, type Logger } from '@portcullis/core';
import { AuthWaitingRoom } from '@portcullis/core/transport';
import { TcpConnection } from './tcp-connection.js';
import { resolveTcpOptions, type ResolvedTcpOptions, type TcpTransportOptions } from './tcp-options.js';

/**
 * A TCP server that serves portals.
 *
 * @example
 * ```ts
 * const tcp = createTcpTransport({ dispatcher, registry });
 * const { port } = await tcp.listen(3001, '127.0.0.1');
 * // later
 * await tcp.close();
 * ```
 */
export class TcpTransport {
  readonly server: Server;
  private readonly options: ResolvedTcpOptions;
  private readonly sockets = new Set<Socket>();
  private readonly log: Logger;
  private readonly waiting: AuthWaitingRoom;

  constructor(options: TcpTransportOptions) {
    this.options = resolveTcpOptions(options);
    this.waiting = new AuthWaitingRoom(this.options.maxAwaitingAuthPerAddress);
    this.log = (this.options.loggers ?? consoleLoggerFactory).create('portcullis:tcp');
    this.server = createServer({ noDelay: true }, (socket) => this.accept(socket));
    this.server.on('error', (error) => this.log.error('TCP server error', describeError(error)));
  }

  /** Open connections. */
  get connectionCount(): number {
    return this.sockets.size;
  }

  /** Starts listening; resolves with the bound address (port 0 picks a free port). */
  listen(port = 0, host = '127.0.0.1'): Promise<AddressInfo> {
    return new Promise((resolve, reject) => {
      const onError = (error: Error) => reject(error);
      this.server.once('error', onError);
      this.server.listen(port, host, () => {
        this.server.off('error', onError);
        resolve(this.server.address() as AddressInfo);
      });
    });
  }

  /** The bound address, once listening. */
  address(): AddressInfo | undefined {
    const address = this.server.address();
    return address !== null && typeof address === 'object' ? address : undefined;
  }

  /** Stops accepting, closes every connection, and resolves when the server is closed. */
  close(): Promise<void> {
    const closed = new Promise<void>((resolve) => {
      if (!this.server.listening) return resolve();
      this.server.close(() => resolve());
    });
    for (const socket of this.sockets) socket.destroy();
    return closed;
  }

  private accept(socket: Socket): void {
    // Every TCP connection waits for its auth frame: one address holds at most the cap of them.
    const ticket = this.waiting.enter(socket.remoteAddress);
    if (ticket === undefined) {
      this.log.debug('refusing a TCP connection: too many from its address wait to authenticate', { remoteAddress: socket.remoteAddress });
      socket.on('error', () => undefined);
      socket.destroy();
      return;
    }
    this.sockets.add(socket);
    socket.once('close', () => {
      ticket.leave();
      this.sockets.delete(socket);
    });
    new TcpConnection(socket, this.options, this.log, ticket);
  }
}

/**
 * Creates a TCP transport; call `listen` to start it.
 *
 * @example
 * ```ts
 * await createTcpTransport({ dispatcher, registry }).listen(3001);
 * ```
 */
export function createTcpTransport(options: TcpTransportOptions): TcpTransport {
  return new TcpTransport(options);
}
