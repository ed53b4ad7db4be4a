import { connect, type Socket } from 'node:net';
import { isServerErrorCode, PortcullisClientError } from '../errors/portcullis-client-error.js';
import { authAnswer, parseFrame } from '../realtime/frame-json.js';
import type { LinkRequest, LinkSink, RealtimeLink, RealtimeTransport } from '../realtime/realtime-transport.js';
import { encodeFrame, FrameDecoder } from './length-prefixed-codec.js';

/**
 * Options of {@link tcpTransport}.
 *
 * @example
 * ```ts
 * const conn = await client.connect({ transport: tcpTransport({ host: '127.0.0.1', port: 3001 } satisfies TcpTransportOptions) });
 * ```
 */
export interface TcpTransportOptions {
  readonly host?: string;
  readonly port: number;
  /** Largest frame accepted from the server (64 KiB). */
  readonly maxFrameBytes?: number;
}

function refusal(frame: Readonly<Record<string, unknown>>): PortcullisClientError {
  const error = (frame['error'] ?? {}) as { code?: unknown; message?: unknown };
  const code = isServerErrorCode(error.code) ? error.code : 'unauthorized';
  return new PortcullisClientError(code, typeof error.message === 'string' ? error.message : 'the server refused the TCP credential');
}

function openTcp(options: TcpTransportOptions, request: LinkRequest, sink: LinkSink): Promise<RealtimeLink> {
  const socket: Socket = connect({ host: options.host ?? '127.0.0.1', port: options.port });
  socket.setNoDelay(true);
  const decoder = new FrameDecoder(options.maxFrameBytes ?? 64 * 1024);
  let closedByUs = false;
  let authenticated = false;
  let refusedLater = false;
  let connected = false;
  const link: RealtimeLink = {
    send(frame) {
      if (socket.destroyed || !socket.writable) throw new PortcullisClientError('connection_closed', 'the TCP connection is closed');
      socket.write(encodeFrame(frame));
    },
    settle() {},
    close() { closedByUs = true; socket.destroy(); },
  };
  return new Promise((resolve, reject) => {
    const fail = (error: PortcullisClientError): void => {
      clearTimeout(timer);
      closedByUs = true;
      socket.destroy();
      reject(error);
    };
    const timer = setTimeout(() => fail(new PortcullisClientError('timeout', 'the TCP handshake timed out')), request.handshakeTimeoutMs);
    socket.once('connect', () => {
      connected = true;
      socket.write(encodeFrame({ type: 'auth', token: request.credential }));
    });
    socket.on('data', (chunk: Buffer) => {
      let texts: string[];
      try {
        texts = decoder.push(chunk);
      } catch (error) {
        return authenticated ? void socket.destroy() : fail(error as PortcullisClientError);
      }
      for (const text of texts) {
        const frame = parseFrame(text);
        if (frame === undefined) continue;
        const answer = authAnswer(frame);
        if (authenticated) {
          // A revoked credential is announced with a failed auth answer before the server closes.
          if (answer?.ok === false) refusedLater = true;
          else sink.frame(frame);
          continue;
        }
        if (answer === undefined) continue;
        if (!answer.ok) return fail(refusal(answer.frame));
        authenticated = true;
        clearTimeout(timer);
        resolve(link);
      }
    });
    const ended = (): void => {
      if (!authenticated) {
        return fail(new PortcullisClientError('network_error', connected ? 'the TCP connection closed before it was authenticated' : 'could not connect over TCP'));
      }
      if (closedByUs) return;
      closedByUs = true;
      socket.destroy();
      sink.closed({ refused: refusedLater, error: new PortcullisClientError('connection_closed', 'the TCP connection closed') });
    };
    socket.on('error', () => {});
    // The server's FIN ends the link at once, so no request is written into a half-closed socket.
    socket.on('end', ended);
    socket.on('close', ended);
  });
}

/**
 * The TCP transport (Node only): length-prefixed JSON frames, the auth frame
 * first (`token: null` for an anonymous connection), answered before any request.
 *
 * @example
 * ```ts
 * import { tcpTransport } from '@portcullis/client/node';
 * const conn = await client.connect({ transport: tcpTransport({ port: 3001 }) });
 * ```
 */
export function tcpTransport(options: TcpTransportOptions): RealtimeTransport {
  return { kind: 'tcp', open: (request, sink) => openTcp(options, request, sink) };
}
