/**
 * Length-prefixed framing for stream transports (TCP): a 4-byte unsigned
 * big-endian length, then that many bytes of UTF-8 JSON. Transport-neutral so a
 * client SDK and any other stream adapter frame bytes the same way.
 */

/**
 * Bytes of the length prefix.
 *
 * @example
 * ```ts
 * const bodyBytes = encodeFrame(text).length - FRAME_HEADER_BYTES;
 * ```
 */
export const FRAME_HEADER_BYTES = 4;

/**
 * Default largest frame body accepted (64 KiB).
 *
 * @example
 * ```ts
 * const decoder = new FrameDecoder({ maxFrameBytes: DEFAULT_MAX_FRAME_BYTES });
 * ```
 */
export const DEFAULT_MAX_FRAME_BYTES = 64 * 1024;

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Parses one JSON message of any transport: text, or bytes that must be valid UTF-8.
 * Undefined when it is not (JSON itself never gives undefined).
 *
 * @example
 * ```ts
 * const raw = parseJsonFrame(datagram);
 * if (raw === undefined) return; // garbage
 * ```
 */
export function parseJsonFrame(message: string | Uint8Array): unknown {
  try {
    return JSON.parse(typeof message === 'string' ? message : strictUtf8.decode(message));
  } catch {
    return undefined;
  }
}

/**
 * Prefixes `body` with its 4-byte big-endian length.
 *
 * @example
 * ```ts
 * socket.write(encodeFrame(JSON.stringify({ type: 'auth', token: null })));
 * ```
 */
export function encodeFrame(body: string | Uint8Array): Buffer {
  const length = typeof body === 'string' ? Buffer.byteLength(body, 'utf8') : body.length;
  const frame = Buffer.allocUnsafe(FRAME_HEADER_BYTES + length);
  frame.writeUInt32BE(length, 0);
  if (typeof body === 'string') frame.write(body, FRAME_HEADER_BYTES, 'utf8');
  else frame.set(body, FRAME_HEADER_BYTES);
  return frame;
}

/**
 * Why a {@link FrameDecoder} stopped: the announced length is over the limit.
 *
 * @example
 * ```ts
 * try {
 *   decoder.push(chunk);
 * } catch (error) {
 *   if (error instanceof FrameTooLargeError) socket.destroy();
 * }
 * ```
 */
export class FrameTooLargeError extends Error {
  readonly announcedBytes: number;
  readonly maxBytes: number;

  constructor(announcedBytes: number, maxBytes: number) {
    super(`frame of ${announcedBytes} bytes exceeds the limit of ${maxBytes} bytes`);
    this.name = 'FrameTooLargeError';
    this.announcedBytes = announcedBytes;
    this.maxBytes = maxBytes;
  }
}

/**
 * Turns a stream of arbitrary chunks into whole frame bodies. Survives frames
 * split over many chunks and many frames in one chunk; every byte is copied at
 * most once (chunks are kept in a list and joined only when a frame is complete),
 * so thousands of one-byte chunks cost O(n), not O(n²). An announced length over
 * `maxFrameBytes` throws {@link FrameTooLargeError} as soon as the 4-byte prefix
 * is read, before any of the body is buffered.
 *
 * @example
 * ```ts
 * const decoder = new FrameDecoder({ maxFrameBytes: 64 * 1024 });
 * socket.on('data', (chunk) => {
 *   for (const body of decoder.push(chunk)) handle(body.toString('utf8'));
 * });
 * ```
 */
export class FrameDecoder {
  readonly maxFrameBytes: number;
  private chunks: Buffer[] = [];
  private headIndex = 0;
  private headOffset = 0;
  private buffered = 0;
  private expected = -1;

  constructor(options: { maxFrameBytes?: number } = {}) {
    this.maxFrameBytes = options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES;
  }

  /** Bytes received but not yet returned as a frame. */
  get bufferedBytes(): number {
    return this.buffered;
  }

  /**
   * Adds a chunk and returns every frame body it completed, in order. The
   * returned buffers may share memory with the pushed chunks.
   *
   * @throws {FrameTooLargeError} when a length prefix announces more than the limit.
   */
  push(chunk: Uint8Array): Buffer[] {
    if (chunk.length > 0) {
      this.chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length));
      this.buffered += chunk.length;
    }
    const frames: Buffer[] = [];
    for (;;) {
      if (this.expected < 0) {
        if (this.buffered < FRAME_HEADER_BYTES) break;
        const length = this.take(FRAME_HEADER_BYTES).readUInt32BE(0);
        if (length > this.maxFrameBytes) throw new FrameTooLargeError(length, this.maxFrameBytes);
        this.expected = length;
      }
      if (this.buffered < this.expected) break;
      frames.push(this.take(this.expected));
      this.expected = -1;
    }
    return frames;
  }

  /** Drops everything buffered (after an error, before discarding the decoder). */
  reset(): void {
    this.chunks = [];
    this.headIndex = 0;
    this.headOffset = 0;
    this.buffered = 0;
    this.expected = -1;
  }

  private take(count: number): Buffer {
    const first = this.chunks[this.headIndex];
    if (count === 0) return Buffer.alloc(0);
    if (first && first.length - this.headOffset >= count) {
      const out = first.subarray(this.headOffset, this.headOffset + count);
      this.advance(count);
      return out;
    }
    const out = Buffer.allocUnsafe(count);
    let written = 0;
    while (written < count) {
      const chunk = this.chunks[this.headIndex]!;
      const n = Math.min(count - written, chunk.length - this.headOffset);
      chunk.copy(out, written, this.headOffset, this.headOffset + n);
      written += n;
      this.advance(n);
    }
    return out;
  }

  private advance(count: number): void {
    this.buffered -= count;
    this.headOffset += count;
    const first = this.chunks[this.headIndex];
    if (first && this.headOffset === first.length) {
      this.headIndex += 1;
      this.headOffset = 0;
      // Compact rarely: shifting per consumed chunk would be O(n²) for many tiny chunks.
      if (this.headIndex === this.chunks.length) {
        this.chunks = [];
        this.headIndex = 0;
      } else if (this.headIndex >= 1024) {
        this.chunks = this.chunks.slice(this.headIndex);
        this.headIndex = 0;
      }
    }
  }
}
