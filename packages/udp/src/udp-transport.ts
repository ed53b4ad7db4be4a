/**
 * The UDP transport on `node:dgram`: one datagram is one request carrying its own
 * `token`; the reply goes back to the sender's address and port. Oversized
 * datagrams and garbage get no reply, and replies to senders that did not
 * authenticate never exceed their request's size (anti-amplification).
 */
import { createSocket, type RemoteInfo, type Socket } from 'node:dgram';
import type { AddressInfo } from 'node:net';
import { consoleLoggerFactory, describeError, type Logger } from '@portcullis/core';
import type { ConnectionContext } from '@portcullis/core/transport';
import { encodeReply, parseJsonFrame } from '@portcullis/protocol';
import { fitReply } from './udp-reply-budget.js';
import { resolveUdpOptions, type ResolvedUdpOptions, type UdpTransportOptions } from './udp-options.js';

/**
 * Counters of datagrams that got no reply, for metrics.
 *
 * @example
 * ```ts
 * setInterval(() => metrics.gauge('udp.garbage', udp.dropped.garbage), 10_000);
 * ```
 */
export interface UdpDropCounts {
  /** Over `maxDatagramBytes`. */
  oversized: number;
  /** Not a JSON request with a numeric `id`. */
  garbage: number;
  /** Reply over the anti-amplification budget of an unauthenticated sender. */
  amplification: number;
  /** Arrived while `maxPendingRequests` datagrams were being answered. */
  overloaded: number;
}

/**
 * A UDP socket that serves portals.
 *
 * @example
 * ```ts
 * const udp = createUdpTransport({ dispatcher });
 * await udp.bind(3002, '127.0.0.1');
 * ```
 */
export class UdpTransport {
  readonly socket: Socket;
  /** Why datagrams went unanswered since start. */
  readonly dropped: UdpDropCounts = { oversized: 0, garbage: 0, amplification: 0, overloaded: 0 };
  private readonly options: ResolvedUdpOptions;
  private readonly log: Logger;
  private pending = 0;

  constructor(options: UdpTransportOptions) {
    this.options = resolveUdpOptions(options);
    this.log = (this.options.loggers ?? consoleLoggerFactory).create('portcullis:udp');
    this.socket = createSocket({ type: this.options.type });
    this.socket.on('message', (message, peer) => this.receive(message, peer));
    this.socket.on('error', (error) => this.log.warn('UDP socket error', describeError(error)));
  }

  /** Binds the socket; resolves with the bound address (port 0 picks a free port). */
  bind(port = 0, host = '127.0.0.1'): Promise<AddressInfo> {
    return new Promise((resolve, reject) => {
      const onError = (error: Error) => reject(error);
      this.socket.once('error', onError);
      this.socket.bind(port, host, () => {
        this.socket.off('error', onError);
        resolve(this.socket.address());
      });
    });
  }

  /** The bound address. */
  address(): AddressInfo {
    return this.socket.address();
  }

  /** Closes the socket. */
  close(): Promise<void> {
    return new Promise((resolve) => {
      try {
        this.socket.close(() => resolve());
      } catch {
        resolve();
      }
    });
  }

  private receive(message: Buffer, peer: RemoteInfo): void {
    if (message.length > this.options.maxDatagramBytes) {
      this.dropped.oversized++;
      return;
    }
    if (this.pending >= this.options.maxPendingRequests) {
      this.dropped.overloaded++;
      return;
    }
    const raw = parseRequest(message);
    if (raw === undefined) {
      this.dropped.garbage++;
      return;
    }
    this.pending++;
    this.answer(raw, message.length, peer)
      .catch((error: unknown) => this.log.error('UDP request failed', describeError(error)))
      .finally(() => this.pending--);
  }

  private async answer(raw: Record<string, unknown>, requestBytes: number, peer: RemoteInfo): Promise<void> {
    const conn: ConnectionContext = {
      clientId: `udp-${peer.address}:${peer.port}`,
      transport: 'udp',
      remoteAddress: peer.address,
      credential: undefined,
      tokenInFrame: true,
      // Shared by the gate's shield and, for a reply over budget, the sender's admission, so the
      // datagram's token is verified once.
      memo: new Map(),
    };
    const reply = await this.options.dispatcher.dispatch(raw, conn);
    const budget = Math.floor(requestBytes * this.options.amplificationFactor);
    const full = encodeReply(reply);
    let text = fitReply(reply, full, budget);
    if (text === undefined && (await this.authenticated(raw.token, conn))) text = full;
    if (text === undefined) {
      this.dropped.amplification++;
      return;
    }
    this.socket.send(text, peer.port, peer.address, (error) => {
      if (error) this.log.debug('UDP reply not sent', describeError(error));
    });
  }

  private async authenticated(token: unknown, conn: ConnectionContext): Promise<boolean> {
    if (typeof token !== 'string') return false;
    const admission = await this.options.dispatcher.admit({ ...conn, credential: token });
    return admission.ok;
  }
}

/**
 * Creates a UDP transport; call `bind` to start it.
 *
 * @example
 * ```ts
 * await createUdpTransport({ dispatcher }).bind(3002);
 * ```
 */
export function createUdpTransport(options: UdpTransportOptions): UdpTransport {
  return new UdpTransport(options);
}

function parseRequest(message: Buffer): Record<string, unknown> | undefined {
  const raw = parseJsonFrame(message);
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return undefined;
  const id = (raw as Record<string, unknown>).id;
  return typeof id === 'number' && Number.isFinite(id) ? (raw as Record<string, unknown>) : undefined;
}
