/**
 * A WebSocket client (RFC 6455) for the load generator, doing only what the load
 * tests need, with about a third less CPU per message than `ws`'s client: latency
 * is read in the generator, so every microsecond it spends per reply is one its
 * event loop is not reading the next one, and its stalls show up as the server's
 * latency.
 *
 * It speaks the protocol as any browser does: a masked text frame per `send` (a
 * fresh random mask each), pongs to pings, the closing handshake, and it checks
 * the server's frames (unmasked, no reserved bits, control frames short and
 * whole, valid close codes; a violation ends the connection with 1002). It offers
 * the subset of `ws`'s client API the load tests call: `open`, `message` (a
 * Buffer), `close` (the code: the server's, or 1006 when no close frame came;
 * emitted once, however the connection ends), `error` (the handshake failed) and
 * `unexpected-response` events; `send(text)`, `close()`, `terminate()` and
 * `readyState`. No extensions (no permessage-deflate) and no subprotocols.
 *
 * @example
 * const ws = new LeanWebSocket('ws://127.0.0.1:8080/ws', { headers: { Authorization: `Bearer ${token}` } });
 * ws.once('open', () => ws.send('{"id":1,"portal":"/game","gate":"ping"}'));
 * ws.on('message', (data) => console.log(JSON.parse(data.toString())));
 */
import { createHash, randomBytes, randomFillSync } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { request } from 'node:http';

const ACCEPT_GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';
const MAX_MESSAGE_BYTES = 1 << 20;
const CONNECTING = 0;
const OPEN = 1;
const CLOSING = 2;
const CLOSED = 3;

/** Random bytes for masks, drawn 8 KiB at a time as `ws` does. */
const maskPool = Buffer.alloc(8192);
let maskOffset = maskPool.length;

function nextMask() {
  if (maskOffset === maskPool.length) {
    randomFillSync(maskPool);
    maskOffset = 0;
  }
  maskOffset += 4;
  return maskOffset - 4;
}

/** Close codes a server may send (RFC 6455, 7.4): not 1004–1006 or 1015, which never go on the wire. @param {number} code */
function isValidCloseCode(code) {
  return (code >= 1000 && code <= 1014 && code !== 1004 && code !== 1005 && code !== 1006) || (code >= 3000 && code <= 4999);
}

/**
 * One client frame: FIN, `opcode`, masked `payload` (a string as UTF-8, or a Buffer).
 * @param {number} opcode @param {string | Buffer} payload
 */
function clientFrame(opcode, payload) {
  const length = typeof payload === 'string' ? Buffer.byteLength(payload) : payload.length;
  const lengthBytes = length < 126 ? 0 : length < 65536 ? 2 : 8;
  const start = 2 + lengthBytes + 4;
  const frame = Buffer.allocUnsafe(start + length);
  frame[0] = 0x80 | opcode;
  if (lengthBytes === 0) frame[1] = 0x80 | length;
  else if (lengthBytes === 2) (frame[1] = 0x80 | 126), frame.writeUInt16BE(length, 2);
  else (frame[1] = 0x80 | 127), frame.writeBigUInt64BE(BigInt(length), 2);
  const mask = nextMask();
  maskPool.copy(frame, start - 4, mask, mask + 4);
  if (typeof payload === 'string') frame.write(payload, start, 'utf8');
  else payload.copy(frame, start);
  for (let i = 0; i < length; i++) frame[start + i] = /** @type {number} */ (frame[start + i]) ^ /** @type {number} */ (maskPool[mask + (i & 3)]);
  return frame;
}

export class LeanWebSocket extends EventEmitter {
  static CONNECTING = CONNECTING;
  static OPEN = OPEN;
  static CLOSING = CLOSING;
  static CLOSED = CLOSED;

  readyState = CONNECTING;
  /** @type {import('node:http').ClientRequest} */
  #request;
  /** @type {import('node:net').Socket | undefined} */
  #socket;
  /** Bytes of a frame not yet whole. @type {Buffer | undefined} */
  #pending;
  /** The fragments of a message sent in several frames. @type {Buffer[] | undefined} */
  #fragments;
  #fragmentsBinary = false;
  #closeCode = 1006;
  #closeSent = false;
  #closeReceived = false;

  /** @param {string} url `ws://host:port/path` @param {{ headers?: Record<string, string> }} [options] */
  constructor(url, { headers = {} } = {}) {
    super();
    const { hostname, port, pathname, search } = new URL(url);
    const key = randomBytes(16).toString('base64');
    const req = request({
      host: hostname,
      port,
      path: pathname + search,
      agent: false,
      headers: { ...headers, Connection: 'Upgrade', Upgrade: 'websocket', 'Sec-WebSocket-Key': key, 'Sec-WebSocket-Version': '13' },
    });
    this.#request = req;
    req.on('response', (res) => {
      res.resume();
      req.destroy();
      if (this.readyState !== CONNECTING) return;
      this.readyState = CLOSED;
      if (!this.emit('unexpected-response', req, res)) this.emit('error', new Error(`unexpected server response: ${res.statusCode}`));
      this.emit('close', 1006);
    });
    req.on('error', (error) => this.#fail(error));
    req.on('upgrade', (res, socket, head) => {
      if (this.readyState !== CONNECTING) return void socket.destroy();
      const expected = createHash('sha1').update(key + ACCEPT_GUID).digest('base64');
      if (res.headers['sec-websocket-accept'] !== expected || res.headers['sec-websocket-extensions'] !== undefined) {
        socket.destroy();
        return this.#fail(new Error('invalid WebSocket handshake answer'));
      }
      this.#socket = socket;
      socket.setNoDelay(true);
      socket.on('data', (chunk) => this.#receive(chunk));
      // As with ws, a socket error is not an `error` event: the connection ends, `close` says 1006.
      socket.on('error', () => socket.destroy());
      socket.on('close', () => this.#closed());
      this.readyState = OPEN;
      this.emit('open');
      // A frame that came with the handshake answer is read next tick, once `open`'s awaiters have attached their listeners.
      if (head.length > 0) process.nextTick(() => this.#receive(head));
    });
    req.end();
  }

  /** Sends one text message; throws before the connection is open, drops it once closing. @param {string} text */
  send(text) {
    if (this.readyState === CONNECTING) throw new Error('WebSocket is not open yet');
    if (this.readyState !== OPEN || this.#closeSent) return;
    /** @type {import('node:net').Socket} */ (this.#socket).write(clientFrame(0x1, text));
  }

  /** Starts the closing handshake (code 1000); `close` is emitted when the server has answered and the socket has closed. */
  close(code = 1000) {
    if (this.readyState === CONNECTING) return this.terminate();
    if (this.readyState !== OPEN) return;
    this.readyState = CLOSING;
    this.#sendClose(code);
  }

  /** Drops the connection at once (before it opened too); `close` follows with 1006. */
  terminate() {
    if (this.readyState === CLOSED) return;
    if (this.readyState === CONNECTING) {
      this.#request.destroy();
      return this.#fail(new Error('WebSocket was closed before the connection was established'));
    }
    this.readyState = CLOSING;
    this.#socket?.destroy();
  }

  /** @param {number} code */
  #sendClose(code) {
    if (this.#closeSent || this.#socket === undefined) return;
    this.#closeSent = true;
    const payload = Buffer.alloc(2);
    payload.writeUInt16BE(code);
    this.#socket.write(clientFrame(0x8, payload));
  }

  /** The connection never opened: `error`, then `close` (1006). @param {Error} error */
  #fail(error) {
    if (this.readyState === CLOSED) return;
    this.readyState = CLOSED;
    this.emit('error', error);
    this.emit('close', 1006);
  }

  #closed() {
    if (this.readyState === CLOSED) return;
    this.readyState = CLOSED;
    this.emit('close', this.#closeCode);
  }

  /** A violation of the protocol by the server ends the connection (1002), as `ws` does; answers false. */
  #protocolError() {
    this.#closeCode = 1002;
    this.readyState = CLOSING;
    this.#socket?.destroy();
    return false;
  }

  /** @param {Buffer} chunk */
  #receive(chunk) {
    if (this.#closeReceived) return;
    let data = this.#pending === undefined ? chunk : Buffer.concat([this.#pending, chunk]);
    this.#pending = undefined;
    let at = 0;
    while (data.length - at >= 2) {
      const first = /** @type {number} */ (data[at]);
      const second = /** @type {number} */ (data[at + 1]);
      if ((first & 0x70) !== 0 || (second & 0x80) !== 0) return this.#protocolError();
      let length = second & 0x7f;
      let start = at + 2;
      if (length === 126) {
        if (data.length - at < 4) break;
        length = data.readUInt16BE(at + 2);
        start += 2;
      } else if (length === 127) {
        if (data.length - at < 10) break;
        const long = data.readBigUInt64BE(at + 2);
        if (long > BigInt(MAX_MESSAGE_BYTES)) return this.#protocolError();
        length = Number(long);
        start += 8;
      }
      if (data.length - start < length) break;
      const payload = data.subarray(start, start + length);
      at = start + length;
      if (!this.#frame(first & 0x80, first & 0x0f, payload)) return;
    }
    if (at < data.length) this.#pending = data.subarray(at);
  }

  /**
   * Handles one whole frame; false when the connection ended.
   * @param {number} fin @param {number} opcode @param {Buffer} payload
   * @returns {boolean}
   */
  #frame(fin, opcode, payload) {
    const socket = /** @type {import('node:net').Socket} */ (this.#socket);
    if (opcode >= 0x8) {
      if (!fin || payload.length > 125) return this.#protocolError();
      if (opcode === 0x8) {
        if (payload.length === 1 || (payload.length >= 2 && !isValidCloseCode(payload.readUInt16BE(0)))) return this.#protocolError();
        this.#closeReceived = true;
        this.#closeCode = payload.length >= 2 ? payload.readUInt16BE(0) : 1005;
        if (this.readyState === OPEN) this.readyState = CLOSING;
        this.#sendClose(payload.length >= 2 ? this.#closeCode : 1000);
        socket.end();
        return false;
      }
      if (opcode === 0x9) {
        // A ping may come at any time before the close; once ours is sent, no pong follows it.
        if (!this.#closeSent) socket.write(clientFrame(0xa, payload));
        return true;
      }
      if (opcode !== 0xa) return this.#protocolError();
      return true;
    }
    if (opcode === 0x0) {
      if (this.#fragments === undefined) return this.#protocolError();
      this.#fragments.push(payload);
    } else if (opcode === 0x1 || opcode === 0x2) {
      if (this.#fragments !== undefined) return this.#protocolError();
      if (fin) {
        this.emit('message', payload, opcode === 0x2);
        return !socket.destroyed;
      }
      this.#fragments = [payload];
      this.#fragmentsBinary = opcode === 0x2;
    } else {
      return this.#protocolError();
    }
    const size = this.#fragments.reduce((n, part) => n + part.length, 0);
    if (size > MAX_MESSAGE_BYTES) return this.#protocolError();
    if (!fin) return true;
    const message = Buffer.concat(this.#fragments);
    this.#fragments = undefined;
    this.emit('message', message, this.#fragmentsBinary);
    return !socket.destroyed;
  }
}
