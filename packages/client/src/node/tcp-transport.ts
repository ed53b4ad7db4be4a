import { connect, type Socket } from 'node:net';
import {
  DEFAULT_MAX_FRAME_BYTES, encodeFrame, FrameDecoder, FrameTooLargeError, frameKind, readAuthReply, type AuthFrame, type AuthReply,
} from '@portcullis/protocol';
import { PortcullisClientError } from '../errors/portcullis-client-error.js';
import { parseFrame } from '../realtime/frame-json.js';
import type { InboundFrame, LinkRequest, LinkSink, RealtimeLink, RealtimeTransport } from '../realtime/realtime-transport.js';

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

function refusal(answer: Extract<AuthReply, { ok: false }>): PortcullisClientError {
  return new PortcullisClientError(answer.error.code, answer.error.message);
}

/** The frames of a chunk; a frame announced over the limit is the server breaking the contract. */
function decodeFrames(decoder: FrameDecoder, chunk: Uint8Array): InboundFrame[] {
  let bodies: Uint8Array[];
  try {
    bodies = decoder.push(chunk);
  } catch (error) {
    if (!(error instanceof FrameTooLargeError)) throw error;
    throw new PortcullisClientError('unexpected_response', `the server sent a ${error.announcedBytes}-byte frame (limit ${error.maxBytes})`);
  }
  return bodies.map((body) => parseFrame(body)).filter((frame): frame is InboundFrame => frame !== undefined);
}

function openTcp(options: TcpTransportOptions, request: LinkRequest, sink: LinkSink): Promise<RealtimeLink> {
  const socket: Socket = connect({ host: options.host ?? '127.0.0.1', port: options.port });
  socket.setNoDelay(true);
  const decoder = new FrameDecoder({ maxFrameBytes: options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES });
  let closedByUs = false;
  let authenticated = false;
  let refusedLater = false;
  let connected = false;
  const link: RealtimeLink = {
    send(frame) {
      if (socket.destroyed || !socket.writable) throw new PortcullisClientError('connection_closed', 'the TCP connection is closed');
      socket.write(encodeFrame(JSON.stringify(frame)));
    },
    control(frame) {
      link.send(frame as never);
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
      socket.write(encodeFrame(JSON.stringify({ type: 'auth', token: request.credential } satisfies AuthFrame)));
    });
    socket.on('data', (chunk: Buffer) => {
      let frames: InboundFrame[];
      try {
        frames = decodeFrames(decoder, chunk);
      } catch (error) {
        return authenticated ? void socket.destroy() : fail(error as PortcullisClientError);
      }
      for (const frame of frames) {
        const answer = frameKind(frame) === 'auth' ? readAuthReply(frame) : undefined;
        if (authenticated) {
          // A revoked credential is announced with a failed auth answer before the server closes;
          // any other refusal answers a second auth frame and the connection stays.
          if (answer?.ok === false && answer.error.code === 'unauthorized') refusedLater = true;
          sink.frame(frame);
          continue;
        }
        if (answer === undefined) continue;
        if (!answer.ok) return fail(refusal(answer));
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
