import { randomUUID } from 'node:crypto';
import type { Socket } from 'node:net';
import { describeError, type Logger } from '@portcullis/core';
import { ConnectionProtocol, type AuthTicket } from '@portcullis/core/transport';
import { encodeFrame, FrameDecoder, type CloseReason } from '@portcullis/protocol';
import type { ResolvedTcpOptions } from './tcp-options.js';

/**
 * Serves one TCP connection: length-prefixed frames in, through core's
 * `ConnectionProtocol` (auth frame first, within `authTimeoutMs`), replies out as
 * frames in request order. A missing, late, oversized or malformed first frame,
 * and any later oversized frame, closes the connection. Reading pauses while
 * requests pile up or the socket reports backpressure; a client that lets
 * `maxBufferedBytes` of output pile up is dropped.
 *
 * @example
 * ```ts
 * net.createServer((socket) => new TcpConnection(socket, options, log));
 * ```
 */
export class TcpConnection {
  readonly clientId = `tcp-${randomUUID()}`;
  readonly protocol: ConnectionProtocol;
  private readonly decoder: FrameDecoder;
  private saturated = false;
  private writeBlocked = false;

  constructor(
    private readonly socket: Socket,
    private readonly options: ResolvedTcpOptions,
    private readonly log: Logger,
    authTicket?: AuthTicket,
  ) {
    this.decoder = new FrameDecoder({ maxFrameBytes: options.maxFrameBytes });
    this.protocol = new ConnectionProtocol({
      dispatcher: options.dispatcher,
      registry: options.registry,
      transport: 'tcp',
      clientId: this.clientId,
      remoteAddress: socket.remoteAddress,
      handshake: 'required',
      maxPending: options.maxPendingRequests,
      authTimeoutMs: options.authTimeoutMs,
      anonymousIdleTimeoutMs: options.anonymousIdleTimeoutMs,
      authTicket,
      send: (text) => this.send(text),
      close: (reason) => this.close(reason),
      onSaturated: () => this.setSaturated(true),
      onRelieved: () => this.setSaturated(false),
    });
    socket.setNoDelay(true);
    if (options.keepAliveMs > 0) socket.setKeepAlive(true, options.keepAliveMs);
    socket.on('data', (chunk: Buffer) => this.receive(chunk));
    socket.on('drain', () => {
      this.writeBlocked = false;
      this.updateReading();
    });
    socket.on('error', (error) => {
      log.debug('TCP socket error; the connection closes', { clientId: this.clientId, ...describeError(error) });
    });
    socket.on('close', () => {
      this.decoder.reset();
      this.protocol.dispose();
    });
  }

  private receive(chunk: Buffer): void {
    this.protocol.noteRead(chunk.length, this.socket.readableLength);
    let frames: Uint8Array[];
    try {
      frames = this.decoder.push(chunk);
    } catch {
      this.log.debug('TCP frame over the size limit; closing', { clientId: this.clientId });
      this.decoder.reset();
      this.socket.destroy();
      return;
    }
    // Several requests in one read (the server fell behind its client): the replies answered
    // at once leave in one write instead of one system call each, so a backlog drains faster.
    const batch = frames.length > 1;
    if (batch) this.socket.cork();
    try {
      for (const frame of frames) {
        if (this.socket.destroyed) return;
        this.protocol.receive(frame);
      }
    } finally {
      if (batch) this.socket.uncork();
    }
  }

  private send(text: string): void {
    const { socket } = this;
    if (socket.destroyed || !socket.writable) return;
    const frame = encodeFrame(text);
    // Dropped when this reply would take its unread output past the limit, as the option says.
    if (socket.writableLength + frame.length > this.options.maxBufferedBytes) {
      this.log.warn('dropping a TCP client that does not read its replies', { clientId: this.clientId, bufferedBytes: socket.writableLength });
      socket.destroy();
      return;
    }
    if (!socket.write(frame) && !this.writeBlocked) {
      this.writeBlocked = true;
      this.updateReading();
    }
  }

  private close(reason: CloseReason): void {
    if (reason === 'bad_request') return void this.socket.destroy();
    this.log.debug('closing a TCP connection', { clientId: this.clientId, reason });
    // Flush the auth reply, then stop listening: a peer that keeps its half open is cut off.
    this.socket.end();
    this.socket.pause();
    setTimeout(() => this.socket.destroy(), 2000).unref();
  }

  private setSaturated(saturated: boolean): void {
    this.saturated = saturated;
    this.updateReading();
  }

  private updateReading(): void {
    if (this.saturated || this.writeBlocked) this.socket.pause();
    else if (!this.socket.destroyed && this.socket.writable) this.socket.resume();
  }
}
