import { Buffer } from 'node:buffer';
import { PortcullisClientError } from '../errors/portcullis-client-error.js';

/**
 * Encodes one TCP frame: a 4-byte unsigned big-endian length, then that many
 * bytes of UTF-8 JSON.
 *
 * @example
 * ```ts
 * socket.write(encodeFrame({ type: 'auth', token }));
 * ```
 */
export function encodeFrame(message: unknown): Buffer {
  const body = Buffer.from(JSON.stringify(message), 'utf8');
  const header = Buffer.alloc(4);
  header.writeUInt32BE(body.length, 0);
  return Buffer.concat([header, body]);
}

/**
 * Splits a TCP byte stream into frame bodies (UTF-8 text), however the bytes
 * were chunked. A frame announced larger than `maxFrameBytes` throws.
 *
 * @example
 * ```ts
 * const decoder = new FrameDecoder(64 * 1024);
 * socket.on('data', (chunk) => decoder.push(chunk).forEach(handle));
 * ```
 */
export class FrameDecoder {
  #buffered: Buffer = Buffer.alloc(0);

  constructor(private readonly maxFrameBytes: number) {}

  push(chunk: Buffer): string[] {
    this.#buffered = this.#buffered.length === 0 ? chunk : Buffer.concat([this.#buffered, chunk]);
    const frames: string[] = [];
    while (this.#buffered.length >= 4) {
      const length = this.#buffered.readUInt32BE(0);
      if (length > this.maxFrameBytes) throw new PortcullisClientError('unexpected_response', `the server sent a ${length}-byte frame (limit ${this.maxFrameBytes})`);
      if (this.#buffered.length < 4 + length) break;
      frames.push(this.#buffered.toString('utf8', 4, 4 + length));
      this.#buffered = this.#buffered.subarray(4 + length);
    }
    return frames;
  }
}
