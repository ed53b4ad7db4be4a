/**
 * The UDP transport on `node:dgram`, serving two forms on one port: an
 * authenticated datagram (byte 0 is `0x01`: session `sid`, sequence number, JSON
 * request, MAC) answered in the same form, and a JSON datagram carrying its own
 * `token`. Oversized datagrams, garbage, bad MACs and replays get no reply, and
 * replies to JSON datagrams never exceed their request's size (anti-amplification).
 */
import { createSocket, type RemoteInfo, type Socket } from 'node:dgram';
import type { AddressInfo } from 'node:net';
import { consoleLoggerFactory, describeError, type Logger } from '@portcullis/core';
import { closeReasonOf, type ConnectionContext } from '@portcullis/core/transport';
import { encodeReply, errorReply, isUdpDatagram, parseJsonFrame, readUdpDatagram, type GateReply } from '@portcullis/protocol';
import { fitReply } from './udp-reply-budget.js';
import { resolveUdpOptions, type ResolvedUdpOptions, type UdpTransportOptions } from './udp-options.js';
import { UdpSessions, type UdpSessionEntry } from './udp-sessions.js';

/**
 * Counters of datagrams that got no reply, for metrics.
 *
 * @example
 * ```ts
 * setInterval(() => metrics.gauge('udp.replayed', udp.dropped.replay), 10_000);
 * ```
 */
export interface UdpDropCounts {
  /** Over `maxDatagramBytes`. */
  oversized: number;
  /** Not a JSON request with a numeric `id` (also inside an authenticated datagram). */
  garbage: number;
  /** Reply over the anti-amplification budget of a JSON datagram. */
  amplification: number;
  /** Arrived while `maxPendingRequests` datagrams were being answered. */
  overloaded: number;
  /** Authenticated form with a bad MAC, a `sid` no key of this server verifies, or too short to hold one. */
  mac: number;
  /** Authenticated form with a sequence number already seen, or older than the 64 newest of its session. */
  replay: number;
  /** A JSON datagram with a `token` while `requireMac` is on. */
  bearer: number;
}

/**
 * A UDP socket that serves portals.
 *
 * @example
 * ```ts
 * const udp = createUdpTransport({ dispatcher, keyring: container.resolve(UdpKeyring) });
 * await udp.bind(3002, '127.0.0.1');
 * ```
 */
export class UdpTransport {
  readonly socket: Socket;
  /** Why datagrams went unanswered since start. */
  readonly dropped: UdpDropCounts = { oversized: 0, garbage: 0, amplification: 0, overloaded: 0, mac: 0, replay: 0, bearer: 0 };
  private readonly options: ResolvedUdpOptions;
  private readonly sessions: UdpSessions | undefined;
  private readonly log: Logger;
  private pending = 0;

  constructor(options: UdpTransportOptions) {
    this.options = resolveUdpOptions(options);
    this.log = (this.options.loggers ?? consoleLoggerFactory).create('portcullis:udp');
    this.sessions = this.options.keyring && new UdpSessions(this.options.keyring, this.options.maxReplayWindows);
    this.socket = createSocket({ type: this.options.type });
    this.socket.on('message', (message, peer) => this.receive(message, peer));
    this.socket.on('error', (error) => this.log.warn('UDP socket error', describeError(error)));
  }

  /** Sessions whose replay window this process keeps now. */
  get replayWindows(): number {
    return this.sessions?.size ?? 0;
  }

  /** Replay windows forgotten to stay within `maxReplayWindows` since start. */
  get replayWindowsEvicted(): number {
    return this.sessions?.evicted ?? 0;
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
    if (isUdpDatagram(message)) this.receiveAuthenticated(message, peer);
    else this.receiveJson(message, peer);
  }

  private receiveJson(message: Buffer, peer: RemoteInfo): void {
    const raw = parseRequest(message);
    if (raw === undefined) {
      this.dropped.garbage++;
      return;
    }
    if (this.options.requireMac && raw.token !== undefined) {
      this.dropped.bearer++;
      return;
    }
    this.track(this.answerJson(raw, message.length, peer));
  }

  private receiveAuthenticated(message: Buffer, peer: RemoteInfo): void {
    const parts = readUdpDatagram(message);
    // The MAC is checked before anything else is looked at, and a window is kept only for a sid
    // whose MAC checked out: a flood of made-up sids costs a few HMACs each and grows nothing.
    const entry = parts && this.sessions?.authenticate(message, message.toString('hex', 1, 17));
    if (parts === undefined || entry === undefined) {
      this.dropped.mac++;
      return;
    }
    if (!entry.window.acceptSplit(parts.seqHigh, parts.seqLow)) {
      this.dropped.replay++;
      return;
    }
    const raw = parseRequest(parts.body);
    if (raw === undefined) {
      this.dropped.garbage++;
      return;
    }
    this.track(this.answerAuthenticated(raw, entry, peer));
  }

  private track(answering: Promise<void>): void {
    this.pending++;
    answering.catch((error: unknown) => this.log.error('UDP request failed', describeError(error))).finally(() => this.pending--);
  }

  private async answerJson(raw: Record<string, unknown>, requestBytes: number, peer: RemoteInfo): Promise<void> {
    const conn: ConnectionContext = { ...peerContext(peer), credential: undefined, tokenInFrame: true, memo: new Map() };
    const reply = await this.options.dispatcher.dispatch(raw, conn);
    // Every JSON reply keeps the budget, a valid token or not: the source address may be a victim's.
    const text = fitReply(reply, encodeReply(reply), Math.floor(requestBytes * this.options.amplificationFactor));
    if (text === undefined) {
      this.dropped.amplification++;
      return;
    }
    this.socket.send(text, peer.port, peer.address, this.sent);
  }

  private async answerAuthenticated(raw: Record<string, unknown>, entry: UdpSessionEntry, peer: RemoteInfo): Promise<void> {
    const conn: ConnectionContext = { ...peerContext(peer), credential: undefined, sessionId: entry.sidHex };
    // The session is checked on every datagram, whatever the gate: a revoked or replaced
    // session's datagram is answered `unauthorized` even at an unshielded gate.
    const decided = this.options.dispatcher.admit(conn);
    const admission = decided instanceof Promise ? await decided : decided;
    const reply: GateReply = admission.ok ? await this.options.dispatcher.dispatch(raw, conn) : errorReply(raw.id as number, closeReasonOf(admission));
    this.socket.send(this.sessions!.seal(entry, Buffer.from(encodeReply(reply), 'utf8')), peer.port, peer.address, this.sent);
  }

  private readonly sent = (error: Error | null): void => {
    if (error) this.log.debug('UDP reply not sent', describeError(error));
  };
}

/**
 * Creates a UDP transport; call `bind` to start it.
 *
 * @example
 * ```ts
 * await createUdpTransport({ dispatcher, keyring: container.resolve(UdpKeyring) }).bind(3002);
 * ```
 */
export function createUdpTransport(options: UdpTransportOptions): UdpTransport {
  return new UdpTransport(options);
}

function peerContext(peer: RemoteInfo): Pick<ConnectionContext, 'clientId' | 'transport' | 'remoteAddress'> {
  return { clientId: `udp-${peer.address}:${peer.port}`, transport: 'udp', remoteAddress: peer.address };
}

function parseRequest(message: Uint8Array): Record<string, unknown> | undefined {
  const raw = parseJsonFrame(message);
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return undefined;
  const id = (raw as Record<string, unknown>).id;
  return typeof id === 'number' && Number.isFinite(id) ? (raw as Record<string, unknown>) : undefined;
}
