import { Buffer } from 'node:buffer';
import { createSocket, type Socket } from 'node:dgram';
import { isIPv6 } from 'node:net';
import { PortcullisClientError } from '../errors/portcullis-client-error.js';
import { UDP_MIN_DATAGRAM_BYTES } from '@portcullis/protocol';
import { parseFrame } from '../realtime/frame-json.js';
import { UdpDatagramSeal } from './udp-datagram-seal.js';
import type { LinkRequest, LinkSink, RealtimeLink, RealtimeTransport, RequestFrame } from '../realtime/realtime-transport.js';

/**
 * Options of {@link udpTransport}.
 *
 * @example
 * ```ts
 * const conn = await client.connect({ transport: udpTransport({ port: 3002, retryIntervalMs: 100 } satisfies UdpTransportOptions) });
 * ```
 */
export interface UdpTransportOptions {
  readonly host?: string;
  readonly port: number;
  /** Time before a datagram without reply is sent again (250 ms). */
  readonly retryIntervalMs?: number;
  /** Sends of one request, the first included (5). The request's own timeout still bounds the wait. */
  readonly maxAttempts?: number;
  /** Largest datagram sent; the server drops larger ones (1,200 bytes). */
  readonly maxDatagramBytes?: number;
  /**
   * Authenticate datagrams with the session's UDP key instead of sending the token
   * (true). With a session the server issued a `udpKey` for, no token goes on the
   * wire and only replies sealed with that key are accepted. `false`, a JWT or a
   * server that issued no key sends the token in every JSON datagram.
   */
  readonly mac?: boolean;
}

function connectSocket(host: string, port: number): Promise<Socket> {
  const socket = createSocket(isIPv6(host) ? 'udp6' : 'udp4');
  return new Promise((resolve, reject) => {
    socket.once('error', (cause) => reject(new PortcullisClientError('network_error', 'could not open the UDP socket', { cause })));
    socket.connect(port, host, () => {
      socket.removeAllListeners('error');
      // A connected socket reports ICMP "port unreachable" as errors; retransmission covers them.
      socket.on('error', () => {});
      resolve(socket);
    });
  });
}

async function openUdp(options: UdpTransportOptions, request: LinkRequest, sink: LinkSink): Promise<RealtimeLink> {
  const socket = await connectSocket(options.host ?? '127.0.0.1', options.port);
  const retryIntervalMs = options.retryIntervalMs ?? 250;
  const maxAttempts = options.maxAttempts ?? 5;
  const maxBytes = options.maxDatagramBytes ?? 1200;
  const retries = new Map<number, ReturnType<typeof setInterval>>();
  let closed = false;
  const settle = (id: number): void => {
    clearInterval(retries.get(id));
    retries.delete(id);
  };
  const seal = options.mac !== false && request.credential !== null && request.udpKey !== undefined
    ? new UdpDatagramSeal(request.credential, request.udpKey)
    : undefined;
  socket.on('message', (message: Buffer) => {
    // With a seal, a reply that is not this session's, sealed with its key and new, is ignored.
    const body = seal === undefined ? message : seal.open(message);
    const frame = body && parseFrame(body);
    if (frame === undefined) return;
    if (typeof frame['id'] === 'number') settle(frame['id']);
    sink.frame(frame);
  });
  return {
    send(frame: RequestFrame) {
      if (closed) throw new PortcullisClientError('connection_closed', 'the UDP socket is closed');
      const json = Buffer.from(JSON.stringify(request.credential === null || seal !== undefined ? frame : { ...frame, token: request.credential }), 'utf8');
      const size = seal === undefined ? json.length : json.length + UDP_MIN_DATAGRAM_BYTES;
      if (size > maxBytes) throw new PortcullisClientError('bad_request', `the request is ${size} bytes; UDP datagrams are limited to ${maxBytes}`);
      // A sealed request is sealed again for every send: the server drops a sequence number it has seen.
      const transmit = (): void => { if (!closed) socket.send(seal === undefined ? json : seal.seal(json), () => {}); };
      transmit();
      let attempts = 1;
      settle(frame.id);
      retries.set(frame.id, setInterval(() => {
        if (++attempts > maxAttempts) return settle(frame.id);
        transmit();
      }, retryIntervalMs));
    },
    settle,
    close() {
      if (closed) return;
      closed = true;
      for (const id of [...retries.keys()]) settle(id);
      socket.close();
    },
  };
}

/**
 * The UDP transport (Node only): one datagram per request, authenticated with the
 * session's UDP key (or, for a JWT or with `mac: false`, with the token added), sent again every `retryIntervalMs` until the reply comes (at-least-once: a gate
 * reached over UDP may run twice for one request if a reply was lost). A
 * session refused by the server is renewed once per request.
 *
 * @example
 * ```ts
 * import { udpTransport } from '@portcullis/client/node';
 * const conn = await client.connect({ transport: udpTransport({ port: 3002 }) });
 * ```
 */
export function udpTransport(options: UdpTransportOptions): RealtimeTransport {
  return { kind: 'udp', open: (request, sink) => openUdp(options, request, sink) };
}
