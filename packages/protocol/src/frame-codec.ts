/**
 * Length-prefixed framing for stream transports (TCP): a 4-byte unsigned
 * big-endian length, then that many bytes of UTF-8 JSON. Plain `Uint8Array`s, so
 * the server, the Node client and any other stream adapter frame bytes the same way.
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

const MAX_LENGTH = 0xffff_ffff;
const utf8 = new TextEncoder();

/**
 * Prefixes `body` (text is encoded as UTF-8) with its 4-byte big-endian length.
 *
 * @throws RangeError for a body over 4 GiB − 1 bytes, which the prefix cannot announce.
 * @example
 * ```ts
 * socket.write(encodeFrame(JSON.stringify({ type: 'auth', token: null })));
 * ```
 */
export function encodeFrame(body: string | Uint8Array): Uint8Array {
  const bytes = typeof body === 'string' ? utf8.encode(body) : body;
  if (bytes.length > MAX_LENGTH) throw new RangeError(`a frame body of ${bytes.length} bytes cannot be announced in 4 bytes`);
  const frame = new Uint8Array(FRAME_HEADER_BYTES + bytes.length);
  new DataView(frame.buffer).setUint32(0, bytes.length);
  frame.set(bytes, FRAME_HEADER_BYTES);
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
 *   for (const body of decoder.push(chunk)) handle(parseJsonFrame(body));
 * });
 * ```
 */
export class FrameDecoder {
  readonly maxFrameBytes: number;
  private chunks: Uint8Array[] = [];
  private headIndex = 0;
  private headOffset = 0;
  private buffered = 0;
  private expected = -1;

  constructor(options: { readonly maxFrameBytes?: number } = {}) {
    this.maxFrameBytes = options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES;
  }

  /** Bytes received but not yet returned as a frame. */
  get bufferedBytes(): number {
    return this.buffered;
  }

  /**
   * Adds a chunk and returns every frame body it completed, in order. The
   * returned bodies may share memory with the pushed chunks.
   *
   * @throws {FrameTooLargeError} when a length prefix announces more than the limit.
   */
  push(chunk: Uint8Array): Uint8Array[] {
    if (chunk.length > 0) {
      this.chunks.push(chunk);
      this.buffered += chunk.length;
    }
    const frames: Uint8Array[] = [];
    for (;;) {
      if (this.expected < 0) {
        if (this.buffered < FRAME_HEADER_BYTES) break;
        const prefix = this.take(FRAME_HEADER_BYTES);
        const length = new DataView(prefix.buffer, prefix.byteOffset, FRAME_HEADER_BYTES).getUint32(0);
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

  private take(count: number): Uint8Array {
    if (count === 0) return new Uint8Array(0);
    const first = this.chunks[this.headIndex];
    if (first && first.length - this.headOffset >= count) {
      const out = first.subarray(this.headOffset, this.headOffset + count);
      this.advance(count);
      return out;
    }
    const out = new Uint8Array(count);
    let written = 0;
    while (written < count) {
      const chunk = this.chunks[this.headIndex]!;
      const n = Math.min(count - written, chunk.length - this.headOffset);
      out.set(chunk.subarray(this.headOffset, this.headOffset + n), written);
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
