import { Buffer } from 'node:buffer';
import { createSocket, type Socket } from 'node:dgram';
import { isIPv6 } from 'node:net';
import { PortcullisClientError } from '../errors/portcullis-client-error.js';
import { parseFrame } from '../realtime/frame-json.js';
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
  socket.on('message', (message: Buffer) => {
    const frame = parseFrame(message);
    if (frame === undefined) return;
    if (typeof frame['id'] === 'number') settle(frame['id']);
    sink.frame(frame);
  });
  return {
    send(frame: RequestFrame) {
      if (closed) throw new PortcullisClientError('connection_closed', 'the UDP socket is closed');
      const datagram = Buffer.from(JSON.stringify(request.credential === null ? frame : { ...frame, token: request.credential }), 'utf8');
      if (datagram.length > maxBytes) throw new PortcullisClientError('bad_request', `the request is ${datagram.length} bytes; UDP datagrams are limited to ${maxBytes}`);
      const transmit = (): void => { if (!closed) socket.send(datagram, () => {}); };
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
 * The UDP transport (Node only): one datagram per request with the token added,
 * sent again every `retryIntervalMs` until the reply comes (at-least-once: a gate
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
