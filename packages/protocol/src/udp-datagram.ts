/**
 * The layout of an authenticated UDP datagram: version byte, session id,
 * sequence number, JSON body and a truncated HMAC-SHA256. Layout only: the MAC is
 * `UdpMacKey`'s, and this file stays free of Node built-ins.
 */

/**
 * Byte 0 of an authenticated datagram. A JSON datagram starts with `{` (0x7b).
 *
 * @example
 * ```ts
 * if (message[0] === UDP_DATAGRAM_VERSION) openSealed(message);
 * ```
 */
export const UDP_DATAGRAM_VERSION = 0x01;
/**
 * Bytes of the session id (`sid`): the first 16 bytes of SHA-256(session access token).
 *
 * @example
 * ```ts
 * const sid = sha256(accessToken).subarray(0, UDP_SID_BYTES);
 * ```
 */
export const UDP_SID_BYTES = 16;
/**
 * Bytes of the sequence number: unsigned 64-bit big-endian.
 *
 * @example
 * ```ts
 * view.setBigUint64(1 + UDP_SID_BYTES, seq); // UDP_SEQ_BYTES bytes
 * ```
 */
export const UDP_SEQ_BYTES = 8;
/**
 * Bytes of the MAC: the first 16 bytes of HMAC-SHA256(udpKey, everything before it).
 *
 * @example
 * ```ts
 * const signed = datagram.subarray(0, datagram.length - UDP_MAC_BYTES);
 * ```
 */
export const UDP_MAC_BYTES = 16;
/**
 * Bytes before the JSON body: version, sid, sequence number (25).
 *
 * @example
 * ```ts
 * const body = datagram.subarray(UDP_HEADER_BYTES, datagram.length - UDP_MAC_BYTES);
 * ```
 */
export const UDP_HEADER_BYTES = 1 + UDP_SID_BYTES + UDP_SEQ_BYTES;
/**
 * The smallest well-formed datagram: header and MAC around an empty body (41 bytes).
 *
 * @example
 * ```ts
 * const room = maxDatagramBytes - UDP_MIN_DATAGRAM_BYTES; // bytes left for the JSON body
 * ```
 */
export const UDP_MIN_DATAGRAM_BYTES = UDP_HEADER_BYTES + UDP_MAC_BYTES;

/**
 * An authenticated datagram cut into its fields (views into the datagram, not copies).
 *
 * @example
 * ```ts
 * const parts: UdpDatagramParts | undefined = readUdpDatagram(bytes);
 * ```
 */
export interface UdpDatagramParts {
  /** Bytes 1–16. */
  readonly sid: Uint8Array;
  /** Bytes 17–24, read as an unsigned 64-bit big-endian number. */
  readonly seq: bigint;
  /** Bytes 17–20: the sequence number's upper 32 bits (for arithmetic without BigInt, as `UdpReplayWindow.acceptSplit`). */
  readonly seqHigh: number;
  /** Bytes 21–24: the sequence number's lower 32 bits. */
  readonly seqLow: number;
  /** The UTF-8 JSON between the header and the MAC. */
  readonly body: Uint8Array;
  /** Bytes 0 … n−17: what the MAC covers. */
  readonly signed: Uint8Array;
  /** The last 16 bytes. */
  readonly mac: Uint8Array;
}

/**
 * True when the datagram claims the authenticated form (byte 0 is the version).
 *
 * @example
 * ```ts
 * if (isUdpDatagram(message)) return receiveAuthenticated(message);
 * ```
 */
export function isUdpDatagram(bytes: Uint8Array): boolean {
  return bytes.length > 0 && bytes[0] === UDP_DATAGRAM_VERSION;
}

/**
 * Cuts an authenticated datagram into its fields; undefined when it is too short
 * or its version byte is not {@link UDP_DATAGRAM_VERSION}. Checks no MAC.
 *
 * @example
 * ```ts
 * const parts = readUdpDatagram(message);
 * if (parts === undefined || !macMatches(key, parts.signed, parts.mac)) return; // drop
 * ```
 */
export function readUdpDatagram(bytes: Uint8Array): UdpDatagramParts | undefined {
  if (bytes.length < UDP_MIN_DATAGRAM_BYTES || bytes[0] !== UDP_DATAGRAM_VERSION) return undefined;
  return new ReadDatagram(bytes);
}

/** The fields of a read datagram, each cut (or, for `seq`, made a BigInt) only when asked for. */
class ReadDatagram implements UdpDatagramParts {
  readonly seqHigh: number;
  readonly seqLow: number;
  readonly #bytes: Uint8Array;

  constructor(bytes: Uint8Array) {
    this.#bytes = bytes;
    this.seqHigh = readUint32(bytes, 1 + UDP_SID_BYTES);
    this.seqLow = readUint32(bytes, 1 + UDP_SID_BYTES + 4);
  }

  get sid(): Uint8Array {
    return this.#bytes.subarray(1, 1 + UDP_SID_BYTES);
  }

  get seq(): bigint {
    return (BigInt(this.seqHigh) << 32n) | BigInt(this.seqLow);
  }

  get body(): Uint8Array {
    return this.#bytes.subarray(UDP_HEADER_BYTES, this.#bytes.length - UDP_MAC_BYTES);
  }

  get signed(): Uint8Array {
    return this.#bytes.subarray(0, this.#bytes.length - UDP_MAC_BYTES);
  }

  get mac(): Uint8Array {
    return this.#bytes.subarray(this.#bytes.length - UDP_MAC_BYTES);
  }
}

/**
 * Lays out a datagram without its MAC: version, sid, sequence number, body, and
 * 16 zero bytes where the MAC goes. `UdpMacKey.sign` writes the MAC over the zeros
 * (HMAC-SHA256(udpKey, the first `length − 16` bytes), its first 16 bytes).
 *
 * The sequence number is a `bigint`, or a `number` when it is a safe integer (below 2⁵³:
 * a counter started at the clock in microseconds stays below it until the year 2255),
 * which costs no BigInt arithmetic.
 *
 * `into`, when given, receives the datagram instead of a new `Uint8Array` (a server lays
 * its replies into pooled Node `Buffer`s, which cost less to allocate); it must be
 * exactly `UDP_HEADER_BYTES + body.length + UDP_MAC_BYTES` long.
 *
 * @throws RangeError for a sid that is not 16 bytes, a sequence number outside 0 … 2⁶⁴−1 or a `number` that is not a safe integer, or an `into` of another length.
 * @example
 * ```ts
 * const datagram = layUdpDatagram(sid, 1n, new TextEncoder().encode('{"id":1,"portal":"/game","gate":"ping"}'));
 * new UdpMacKey(udpKey).sign(datagram);
 * socket.send(layUdpDatagram(sid, Date.now() * 1000, body, Buffer.allocUnsafe(UDP_HEADER_BYTES + body.length + UDP_MAC_BYTES)));
 * ```
 */
export function layUdpDatagram(sid: Uint8Array, seq: bigint | number, body: Uint8Array, into?: Uint8Array): Uint8Array {
  if (sid.length !== UDP_SID_BYTES) throw new RangeError(`a sid is ${UDP_SID_BYTES} bytes, got ${sid.length}`);
  const [high, low] = typeof seq === 'number' ? splitNumber(seq) : splitBigInt(seq);
  const length = UDP_HEADER_BYTES + body.length + UDP_MAC_BYTES;
  if (into !== undefined && into.length !== length) throw new RangeError(`this datagram is ${length} bytes, got room for ${into.length}`);
  const datagram = into ?? new Uint8Array(length);
  datagram[0] = UDP_DATAGRAM_VERSION;
  datagram.set(sid, 1);
  writeUint32(datagram, 1 + UDP_SID_BYTES, high);
  writeUint32(datagram, 1 + UDP_SID_BYTES + 4, low);
  datagram.set(body, UDP_HEADER_BYTES);
  datagram.fill(0, length - UDP_MAC_BYTES);
  return datagram;
}

function splitNumber(seq: number): [number, number] {
  if (!Number.isSafeInteger(seq) || seq < 0) throw new RangeError('a sequence number given as a number is a safe non-negative integer (below 2^53); use a bigint above');
  return [Math.floor(seq / 0x1_0000_0000), seq >>> 0];
}

function splitBigInt(seq: bigint): [number, number] {
  if (seq < 0n || seq > 0xffff_ffff_ffff_ffffn) throw new RangeError('a sequence number is an unsigned 64-bit number');
  return [Number(seq >> 32n), Number(seq & 0xffff_ffffn)];
}

function readUint32(bytes: Uint8Array, at: number): number {
  return ((bytes[at]! << 24) | (bytes[at + 1]! << 16) | (bytes[at + 2]! << 8) | bytes[at + 3]!) >>> 0;
}

function writeUint32(bytes: Uint8Array, at: number, value: number): void {
  bytes[at] = value >>> 24;
  bytes[at + 1] = (value >>> 16) & 0xff;
  bytes[at + 2] = (value >>> 8) & 0xff;
  bytes[at + 3] = value & 0xff;
}
