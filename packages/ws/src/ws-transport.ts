/**
 * The WebSocket transport: attaches to an existing HTTP server (the express one)
 * and serves portals at one path. The credential is checked before the upgrade
 * (`Authorization: Bearer`; a bad one gets HTTP 401 and no `101`); a connection
 * without the header may send the auth frame first (browsers cannot set headers),
 * within `authTimeoutMs`, and at most `maxAwaitingAuthPerAddress` of those wait
 * at once per client address (more are refused with 429 before the upgrade).
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, Server as HttpServer } from 'node:http';
import type { Server as HttpsServer } from 'node:https';
import type { Duplex } from 'node:stream';
import { consoleLoggerFactory, describeError, type Logger } from '@portcullis/core';
import { AuthWaitingRoom, bearerCredentialOf, closeReasonOf } from '@portcullis/core/transport';
import { WS_CLOSE } from '@portcullis/protocol';
import { WebSocketServer, type WebSocket } from 'ws';
import { Heartbeat } from './heartbeat.js';
import { refuseUpgrade, type UpgradeStatus } from './upgrade-refusal.js';
import { WS_ANSWERS } from './ws-answers.js';
import { WebSocketConnection, type WebSocketPeer } from './ws-connection.js';
import { resolveWebSocketOptions, type ResolvedWebSocketOptions, type WebSocketTransportOptions } from './ws-options.js';

/**
 * A WebSocket transport attached to an HTTP server.
 *
 * @example
 * ```ts
 * const transport = attachWebSocketTransport(httpServer, { dispatcher, registry });
 * // later
 * await transport.close();
 * ```
 */
export class WebSocketTransport {
  readonly path: string;
  private readonly options: ResolvedWebSocketOptions;
  private readonly wss: WebSocketServer;
  private readonly heartbeat: Heartbeat;
  private readonly clients = new Set<WebSocket>();
  private readonly waiting: AuthWaitingRoom;
  private readonly log: Logger;
  private readonly listener: (request: IncomingMessage, socket: Duplex, head: Buffer) => void;
  private closed = false;

  constructor(private readonly server: HttpServer | HttpsServer, options: WebSocketTransportOptions) {
    this.options = resolveWebSocketOptions(options);
    this.path = this.options.path;
    this.waiting = new AuthWaitingRoom(this.options.maxAwaitingAuthPerAddress);
    this.log = (this.options.loggers ?? consoleLoggerFactory).create('portcullis:ws');
    this.heartbeat = new Heartbeat(this.options.heartbeatIntervalMs);
    this.wss = new WebSocketServer({
      noServer: true,
      clientTracking: false,
      maxPayload: this.options.maxPayload,
      perMessageDeflate: this.options.perMessageDeflate,
    });
    this.listener = (request, socket, head) => {
      this.upgrade(request, socket, head).catch((error: unknown) => {
        this.log.error('WebSocket upgrade failed', describeError(error));
        socket.destroy();
      });
    };
    server.on('upgrade', this.listener);
  }

  /** Open WebSocket connections. */
  get connectionCount(): number {
    return this.clients.size;
  }

  /** Stops accepting upgrades and closes every connection with 1001. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.server.off('upgrade', this.listener);
    this.heartbeat.stop();
    const closing = [...this.clients].map((ws) => new Promise<void>((resolve) => {
      ws.once('close', () => resolve());
      ws.close(WS_CLOSE.goingAway, 'server shutting down');
      setTimeout(() => ws.terminate(), 1000).unref();
    }));
    await Promise.all(closing);
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
  }

  private async upgrade(request: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    if (pathOf(request.url) !== this.path) {
      if (this.server.listenerCount('upgrade') === 1) refuseUpgrade(socket, 404);
      return;
    }
    const onEarlyError = () => socket.destroy();
    socket.on('error', onEarlyError);
    if (this.closed) return refuseUpgrade(socket, 503);
    const peer = await this.authenticate(request);
    if (typeof peer === 'number') return refuseUpgrade(socket, peer);
    // The socket's end frees a waiting place, whether or not the handshake completes.
    if (peer.authTicket) socket.once('close', () => peer.authTicket!.leave());
    if (socket.destroyed) return peer.authTicket?.leave();
    this.wss.handleUpgrade(request, socket, head, (ws) => {
      socket.off('error', onEarlyError);
      this.accept(ws, socket, peer);
    });
  }

  private async authenticate(request: IncomingMessage): Promise<WebSocketPeer | UpgradeStatus> {
    const clientId = `ws-${randomUUID()}`;
    const remoteAddress = this.options.remoteAddress(request);
    const token = bearerCredentialOf(request);
    if (token === undefined) {
      const authTicket = this.waiting.enter(remoteAddress);
      if (authTicket === undefined) {
        this.log.debug('refusing a WebSocket upgrade: too many from its address wait to authenticate', { remoteAddress });
        return 429;
      }
      return { clientId, remoteAddress, handshake: 'optional', authTicket };
    }
    if (token === null) return WS_ANSWERS.unauthorized.status;
    const memo = new Map<unknown, unknown>();
    const admission = await this.options.dispatcher.admit({ transport: 'ws', credential: token, clientId, remoteAddress, memo });
    if (!admission.ok) return WS_ANSWERS[closeReasonOf(admission)].status;
    return { clientId, remoteAddress, handshake: 'done', credential: admission, memo };
  }

  private accept(ws: WebSocket, socket: Duplex, peer: WebSocketPeer): void {
    if (this.closed) {
      ws.close(WS_CLOSE.goingAway, 'server shutting down');
      return;
    }
    this.clients.add(ws);
    ws.once('close', () => this.clients.delete(ws));
    new WebSocketConnection(ws, socket, peer, this.options, this.heartbeat, this.log);
  }
}

/**
 * Serves portals over WebSocket on `server` at `options.path` (default `/ws`).
 *
 * @example
 * ```ts
 * const http = app.listen(3000);
 * const ws = attachWebSocketTransport(http, { dispatcher, registry });
 * ```
 */
export function attachWebSocketTransport(server: HttpServer | HttpsServer, options: WebSocketTransportOptions): WebSocketTransport {
  return new WebSocketTransport(server, options);
}

function pathOf(url: string | undefined): string {
  if (url === undefined) return '';
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}
