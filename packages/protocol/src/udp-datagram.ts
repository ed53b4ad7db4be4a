/**
 * The layout of an authenticated UDP datagram: version byte, session id,
 * sequence number, JSON body and a truncated HMAC-SHA256. Layout only: the MAC is
 * computed by the caller (Node's `crypto` on either side), so this file stays
 * free of Node built-ins.
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
  const macAt = bytes.length - UDP_MAC_BYTES;
  const seq = (BigInt(readUint32(bytes, 1 + UDP_SID_BYTES)) << 32n) | BigInt(readUint32(bytes, 1 + UDP_SID_BYTES + 4));
  return {
    sid: bytes.subarray(1, 1 + UDP_SID_BYTES),
    seq,
    body: bytes.subarray(UDP_HEADER_BYTES, macAt),
    signed: bytes.subarray(0, macAt),
    mac: bytes.subarray(macAt),
  };
}

/**
 * Lays out a datagram without its MAC: version, sid, sequence number, body, and
 * 16 zero bytes where the MAC goes. Compute HMAC-SHA256(udpKey, the first
 * `length − 16` bytes) and write its first 16 bytes over the zeros.
 *
 * @throws RangeError for a sid that is not 16 bytes or a sequence number outside 0 … 2⁶⁴−1.
 * @example
 * ```ts
 * const datagram = layUdpDatagram(sid, 1n, new TextEncoder().encode('{"id":1,"portal":"/game","gate":"ping"}'));
 * datagram.set(hmac(udpKey, datagram.subarray(0, datagram.length - UDP_MAC_BYTES)).subarray(0, UDP_MAC_BYTES), datagram.length - UDP_MAC_BYTES);
 * ```
 */
export function layUdpDatagram(sid: Uint8Array, seq: bigint, body: Uint8Array): Uint8Array {
  if (sid.length !== UDP_SID_BYTES) throw new RangeError(`a sid is ${UDP_SID_BYTES} bytes, got ${sid.length}`);
  if (seq < 0n || seq > 0xffff_ffff_ffff_ffffn) throw new RangeError('a sequence number is an unsigned 64-bit number');
  const datagram = new Uint8Array(UDP_HEADER_BYTES + body.length + UDP_MAC_BYTES);
  datagram[0] = UDP_DATAGRAM_VERSION;
  datagram.set(sid, 1);
  writeUint32(datagram, 1 + UDP_SID_BYTES, Number(seq >> 32n));
  writeUint32(datagram, 1 + UDP_SID_BYTES + 4, Number(seq & 0xffff_ffffn));
  datagram.set(body, UDP_HEADER_BYTES);
  return datagram;
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
