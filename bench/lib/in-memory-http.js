/**
 * One keep-alive HTTP/1.1 connection to an express app without a socket: node's own HTTP
 * server parses the requests and writes the responses, over an in-memory stream. The
 * requests go one at a time, each sent on the turn after the previous response is complete. For
 * measures that sockets would blur (bench/instructions.bench.js). `cannedConnection` runs the
 * same client against a stream that answers every request with fixed bytes: the client's own
 * share of such a measure, to take out of it.
 */
import { createServer } from 'node:http';
import { Duplex } from 'node:stream';
import { responseReader } from './http-load.js';

/**
 * @param {import('node:http').RequestListener} app
 * @param {string} requestText
 * @example
 * const send = inMemoryConnection(app, 'GET /me HTTP/1.1\r\nHost: bench\r\n\r\n');
 * await send(1000); // resolves once 1000 responses came back, rejects on a status other than 200
 */
export function inMemoryConnection(app, requestText) {
  return connection(requestText, (stream) => createServer(app).emit('connection', stream));
}

/**
 * @param {string} responseText
 * @param {string} requestText
 * @example
 * const send = cannedConnection('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}', request);
 * await send(1000);
 */
export function cannedConnection(responseText, requestText) {
  const response = Buffer.from(responseText, 'latin1');
  return connection(requestText, (stream) => stream.on('data', () => stream.write(response)));
}

/**
 * @param {string} requestText
 * @param {(stream: Duplex) => void} serve attaches the answering side to the stream
 * @returns {(amount: number) => Promise<void>}
 */
function connection(requestText, serve) {
  const request = Buffer.from(requestText, 'latin1');
  /** @type {((chunk: Buffer) => void) | undefined} */
  let onBytes;
  const stream = new Duplex({
    read() {},
    write(chunk, _encoding, callback) {
      callback();
      onBytes?.(chunk);
    },
  });
  // What node's HTTP server reads of a socket.
  Object.assign(stream, { remoteAddress: '127.0.0.1', remotePort: 50000, setTimeout: () => stream, setNoDelay() {}, setKeepAlive() {} });
  serve(stream);
  // The next request goes out on the next turn, as from a socket: never from inside a write.
  const sendRequest = () => stream.push(request);
  return (amount) =>
    new Promise(/** @type {(resolve: () => void, reject: (error: Error) => void) => void} */ ((resolve, reject) => {
      if (amount <= 0) return resolve();
      let left = amount;
      onBytes = responseReader((status) => {
        if (status !== 200) {
          onBytes = undefined;
          reject(new Error(`in-memory request answered ${status}, expected 200`));
        } else if (--left === 0) {
          onBytes = undefined;
          resolve();
        } else {
          setImmediate(sendRequest);
        }
      });
      setImmediate(sendRequest);
    }));
}
