import { readAuthReply, WS_CLOSE, type AuthFrame } from '@portcullis/protocol';
import { isServerErrorCode, PortcullisClientError } from '../errors/portcullis-client-error.js';
import { parseFrame } from './frame-json.js';
import type { LinkRequest, LinkSink, RealtimeLink, RealtimeTransport } from './realtime-transport.js';

/**
 * The part of the WebSocket API the client uses: the browser's, or the `ws` package's.
 *
 * @example
 * ```ts
 * const socket: WebSocketLike = new WebSocket('wss://game.example.com/ws');
 * ```
 */
export interface WebSocketLike {
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  onopen: ((event: unknown) => void) | null;
  onmessage: ((event: { data: unknown }) => void) | null;
  onclose: ((event: { code: number }) => void) | null;
  onerror: ((event: unknown) => void) | null;
}

/**
 * A WebSocket class: `globalThis.WebSocket`, or `WebSocket` of the `ws` package (which accepts `{ headers }`).
 *
 * @example
 * ```ts
 * const transport = webSocketTransport({ WebSocket: globalThis.WebSocket as WebSocketConstructor });
 * ```
 */
export type WebSocketConstructor = new (url: string, protocolsOrOptions?: string | string[] | { headers: Record<string, string> }) => WebSocketLike;

/**
 * Options of {@link webSocketTransport}.
 *
 * @example
 * ```ts
 * const transport = webSocketTransport({ url: 'wss://game.example.com/ws', auth: 'frame' } satisfies WebSocketTransportOptions);
 * ```
 */
export interface WebSocketTransportOptions {
  /** The socket address; default: the client's base URL with `ws:`/`wss:` and path `/ws`. */
  readonly url?: string;
  /** The WebSocket class; default: `ws` in Node (loaded on first use), `globalThis.WebSocket` in browsers. */
  readonly WebSocket?: WebSocketConstructor;
  /**
   * How the credential is presented: `header` (`Authorization: Bearer`, needs a class
   * that takes `{ headers }`, like `ws`) or `frame` (the auth frame as first message,
   * what browsers must do). Default: `header` with `ws`, `frame` otherwise.
   */
  readonly auth?: 'header' | 'frame';
}

const OPEN = 1;
const WS_MODULE = 'ws';

interface ResolvedSocket {
  readonly ctor: WebSocketConstructor;
  readonly auth: 'header' | 'frame';
}

function runsOnNode(): boolean {
  return typeof (globalThis as { process?: { versions?: { node?: unknown } } }).process?.versions?.node === 'string';
}

async function resolveSocket(options: WebSocketTransportOptions): Promise<ResolvedSocket> {
  if (options.WebSocket !== undefined) return { ctor: options.WebSocket, auth: options.auth ?? 'frame' };
  if (runsOnNode()) {
    try {
      const mod = (await import(/* @vite-ignore */ /* webpackIgnore: true */ WS_MODULE)) as { WebSocket?: WebSocketConstructor; default?: WebSocketConstructor };
      const ctor = mod.WebSocket ?? mod.default;
      if (ctor !== undefined) return { ctor, auth: options.auth ?? 'header' };
    } catch {
      // No `ws` installed: fall back to the runtime's own WebSocket below.
    }
  }
  const native = (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket;
  if (native === undefined) throw new PortcullisClientError('network_error', 'no WebSocket implementation: install `ws` or pass `WebSocket`');
  if (options.auth === 'header') throw new PortcullisClientError('invalid_request', 'the built-in WebSocket cannot send an Authorization header; use auth: "frame"');
  return { ctor: native, auth: 'frame' };
}

function socketUrl(baseUrl: string): string {
  const url = new URL('/ws', baseUrl);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  return url.toString();
}

function refusal(code: unknown, message: string, status?: number): PortcullisClientError {
  return new PortcullisClientError(isServerErrorCode(code) ? code : 'unauthorized', message, status === undefined ? {} : { status });
}

function handshakeFailure(status: number | undefined, closeCode: number): PortcullisClientError {
  if (status === 401 || status === 403) return refusal(status === 401 ? 'unauthorized' : 'forbidden', 'the server refused the WebSocket credential', status);
  if (status !== undefined) return new PortcullisClientError('unexpected_response', `the WebSocket upgrade answered HTTP ${status}`, { status });
  if (closeCode === WS_CLOSE.unauthorized) return refusal('unauthorized', 'the server refused the WebSocket credential');
  return new PortcullisClientError('network_error', 'could not open the WebSocket');
}

function openSocket(resolved: ResolvedSocket, url: string, request: LinkRequest, sink: LinkSink): Promise<RealtimeLink> {
  const { credential } = request;
  const byHeader = resolved.auth === 'header' && credential !== null;
  const socket = byHeader ? new resolved.ctor(url, { headers: { authorization: `Bearer ${credential}` } }) : new resolved.ctor(url);
  let status: number | undefined;
  let closedByUs = false;
  // `ws` reports a refused upgrade (401 before the upgrade) through this event; browsers only see a close.
  (socket as { on?: (event: string, listener: (req: unknown, res: { statusCode?: number; resume?: () => void }) => void) => void })
    .on?.('unexpected-response', (_req, res) => { status = res.statusCode; res.resume?.(); socket.close(); });
  const link: RealtimeLink = {
    send(frame) {
      if (socket.readyState !== OPEN) throw new PortcullisClientError('connection_closed', 'the WebSocket is not open');
      socket.send(JSON.stringify(frame));
    },
    control(frame) {
      if (socket.readyState !== OPEN) throw new PortcullisClientError('connection_closed', 'the WebSocket is not open');
      socket.send(JSON.stringify(frame));
    },
    settle() {},
    close() { closedByUs = true; socket.close(WS_CLOSE.normal); },
  };
  return new Promise((resolve, reject) => {
    let settled = false;
    const finish = (error?: PortcullisClientError): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (error !== undefined) { closedByUs = true; socket.close(); return reject(error); }
      socket.onmessage = (event) => { const frame = parseFrame(String(event.data)); if (frame) sink.frame(frame); };
      socket.onclose = (event) => {
        if (!closedByUs) sink.closed({ refused: event.code === WS_CLOSE.unauthorized, closeCode: event.code, error: new PortcullisClientError('connection_closed', `the WebSocket closed (${event.code})`) });
      };
      resolve(link);
    };
    const timer = setTimeout(() => finish(new PortcullisClientError('timeout', 'the WebSocket handshake timed out')), request.handshakeTimeoutMs);
    socket.onerror = () => {};
    socket.onclose = (event) => finish(handshakeFailure(status, event.code));
    socket.onopen = () => {
      if (byHeader || credential === null) return finish();
      socket.send(JSON.stringify({ type: 'auth', token: credential } satisfies AuthFrame));
    };
    socket.onmessage = (event) => {
      const answer = readAuthReply(parseFrame(String(event.data)));
      if (answer === undefined) return;
      finish(answer.ok ? undefined : refusal(answer.error.code, 'the server refused the WebSocket credential'));
    };
  });
}

/**
 * The WebSocket transport, for browsers and Node. In Node it uses the `ws`
 * package and sends the credential in the `Authorization` header; in browsers
 * it sends the auth frame as the first message. The token is never put in the URL.
 *
 * @example
 * ```ts
 * const conn = await client.connect({ transport: webSocketTransport({ url: 'wss://game.example.com/ws' }) });
 * ```
 */
export function webSocketTransport(options: WebSocketTransportOptions = {}): RealtimeTransport {
  let resolved: Promise<ResolvedSocket> | undefined;
  return {
    kind: 'ws',
    async open(request, sink) {
      resolved ??= resolveSocket(options).catch((error: unknown) => { resolved = undefined; throw error; });
      return openSocket(await resolved, options.url ?? socketUrl(request.baseUrl), request, sink);
    },
  };
}
