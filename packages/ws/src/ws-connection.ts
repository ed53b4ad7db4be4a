import type { Duplex } from 'node:stream';
import { describeError, type Logger } from '@portcullis/core';
import { ConnectionProtocol, type Admitted, type AuthTicket, type HandshakeMode } from '@portcullis/core/transport';
import { WebSocket, type RawData } from 'ws';
import type { Heartbeat, Liveness } from './heartbeat.js';
import { WS_ANSWERS } from './ws-answers.js';
import type { ResolvedWebSocketOptions } from './ws-options.js';

/** What the upgrade step learned about a connection. */
export interface WebSocketPeer {
  readonly clientId: string;
  readonly remoteAddress: string | undefined;
  readonly handshake: HandshakeMode;
  readonly credential?: Admitted;
  readonly memo?: Map<unknown, unknown>;
  /** Without `Authorization`: the connection's place among those waiting to authenticate. */
  readonly authTicket?: AuthTicket;
}

/**
 * Serves one accepted WebSocket: messages in, replies out, through core's
 * `ConnectionProtocol`. Stops reading while too many requests are unanswered or
 * the send buffer is above half of `maxBufferedBytes` (until it drains to a
 * quarter); drops a client whose buffer would pass `maxBufferedBytes`. Every
 * socket gets an `error` listener (an oversized frame is reported there and
 * closes with 1009 instead of crashing the process). The replies to all the
 * messages of one read leave in one write (see {@link wrapReads}).
 *
 * @example
 * ```ts
 * wss.handleUpgrade(req, socket, head, (ws) => new WebSocketConnection(ws, socket, peer, options, heartbeat, log));
 * ```
 */
export class WebSocketConnection implements Liveness {
  readonly protocol: ConnectionProtocol;
  /** Set by every message and pong, cleared by the heartbeat's check (see {@link Heartbeat}). */
  alive = true;
  private readonly pauseAbove: number;
  private readonly resumeBelow: number;
  private saturated = false;
  private writeBlocked = false;
  private readonly onFlushed = () => {
    if (this.writeBlocked && this.ws.bufferedAmount <= this.resumeBelow) {
      this.writeBlocked = false;
      this.updateReading();
    }
  };

  constructor(
    private readonly ws: WebSocket,
    socket: Duplex,
    private readonly peer: WebSocketPeer,
    private readonly options: ResolvedWebSocketOptions,
    heartbeat: Heartbeat,
    private readonly log: Logger,
  ) {
    this.pauseAbove = options.maxBufferedBytes >> 1;
    this.resumeBelow = options.maxBufferedBytes >> 2;
    this.protocol = new ConnectionProtocol({
      dispatcher: options.dispatcher,
      registry: options.registry,
      transport: 'ws',
      clientId: peer.clientId,
      remoteAddress: peer.remoteAddress,
      handshake: peer.handshake,
      credential: peer.credential,
      memo: peer.memo,
      maxPending: options.maxPendingRequests,
      authTimeoutMs: peer.handshake === 'done' ? undefined : options.authTimeoutMs,
      anonymousIdleTimeoutMs: options.anonymousIdleTimeoutMs,
      authTicket: peer.authTicket,
      send: (text) => this.send(text),
      close: (reason, detail) => ws.close(WS_ANSWERS[reason].close, detail),
      onSaturated: () => this.setSaturated(true),
      onRelieved: () => this.setSaturated(false),
    });
    // With compression a message is inflated off the loop and dispatched after later reads:
    // its wait is unknown, so it is judged by the lag alone.
    wrapReads(socket, options.perMessageDeflate === false ? this.protocol : undefined);
    heartbeat.add(ws, this);
    ws.on('message', (data: RawData, isBinary: boolean) => {
      this.alive = true;
      this.protocol.receive(isBinary ? toBytes(data) : data.toString());
    });
    ws.on('error', (error) => {
      log.debug('WebSocket error; the connection closes', { clientId: peer.clientId, ...describeError(error) });
    });
    ws.on('close', () => {
      heartbeat.remove(ws);
      this.protocol.dispose();
    });
  }

  private send(text: string): void {
    const { ws } = this;
    if (ws.readyState !== WebSocket.OPEN) return;
    const buffered = ws.bufferedAmount;
    // A UTF-16 unit is at most 3 UTF-8 bytes: count the bytes exactly only near the marks.
    if (buffered + 3 * text.length > this.pauseAbove) {
      const after = buffered + Buffer.byteLength(text);
      if (after > this.options.maxBufferedBytes) {
        this.log.warn('dropping a WebSocket client that does not read its replies', { clientId: this.peer.clientId, bufferedBytes: buffered });
        ws.terminate();
        return;
      }
      if (after > this.pauseAbove && !this.writeBlocked) {
        this.writeBlocked = true;
        this.updateReading();
      }
    }
    // While blocked, every send reports its flush: the last one's may be the only one to
    // find the buffer drained, and reading must not stay paused after it.
    if (this.writeBlocked) ws.send(text, this.onFlushed);
    else ws.send(text);
  }

  private setSaturated(saturated: boolean): void {
    this.saturated = saturated;
    this.updateReading();
  }

  private updateReading(): void {
    const shouldPause = this.saturated || this.writeBlocked;
    if (shouldPause && !this.ws.isPaused) this.ws.pause();
    else if (!shouldPause && this.ws.isPaused) this.ws.resume();
  }
}

/**
 * Tells the protocol of each read, when given ({@link ConnectionProtocol.noteRead}: how long
 * its requests can have waited), and corks `socket` while ws reads the chunk and uncorks it after: ws's `data` listener
 * (added when the WebSocket was set up, before this) emits the chunk's messages
 * synchronously, so the replies answered at once all leave in one `writev` instead of one
 * system call each. A chunk holds several messages when a client's requests queued while
 * the server was busy elsewhere, and then their replies cost one system call. A lone
 * message costs what it did: ws corks around each frame it sends anyway.
 *
 * ws's listener is replaced by one wrapping it, not flanked by two more: `emit` with one
 * listener calls it directly, with three it copies the listener array on every read. The
 * wrapper names ws's listener as its `listener` (as `once` wrappers do), so ws's own
 * `removeListener('data', …)` at close still removes it. Should the socket hold anything
 * but that one plain listener (another ws version), the read is flanked by a cork and an
 * uncork listener instead: the same batching, at the old price.
 */
function wrapReads(socket: Duplex, protocol: ConnectionProtocol | undefined): void {
  const [onData, ...others] = socket.rawListeners('data') as Array<((chunk: Buffer) => void) & { listener?: unknown }>;
  if (onData === undefined || others.length > 0 || onData.listener !== undefined) {
    socket.prependListener('data', (chunk: Buffer) => {
      protocol?.noteRead(chunk.length, socket.readableLength);
      socket.cork();
    });
    socket.on('data', () => socket.uncork());
    return;
  }
  const corked = Object.assign(
    function (this: Duplex, chunk: Buffer): void {
      protocol?.noteRead(chunk.length, socket.readableLength);
      socket.cork();
      try {
        onData.call(this, chunk);
      } finally {
        socket.uncork();
      }
    },
    { listener: onData },
  );
  socket.removeListener('data', onData);
  socket.on('data', corked);
}

function toBytes(data: RawData): Uint8Array {
  if (Array.isArray(data)) return Buffer.concat(data);
  return data instanceof ArrayBuffer ? new Uint8Array(data) : data;
}
