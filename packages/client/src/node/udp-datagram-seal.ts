/**
 * The client's side of authenticated UDP datagrams: seals requests with the
 * session's UDP key and its own sequence numbers, and accepts only replies of the
 * same session whose MAC checks out and whose sequence number is new.
 */
import { Buffer } from 'node:buffer';
import { createHash, createHmac, createSecretKey, timingSafeEqual, type KeyObject } from 'node:crypto';
import { layUdpDatagram, readUdpDatagram, UDP_MAC_BYTES, UDP_SID_BYTES, UdpReplayWindow } from '@portcullis/protocol';

function mac(key: KeyObject, signed: Uint8Array): Buffer {
  return createHmac('sha256', key).update(signed).digest().subarray(0, UDP_MAC_BYTES);
}

/**
 * One session's sealing state: its `sid`, key, next sequence number and the replay
 * window of the server's replies.
 *
 * @example
 * ```ts
 * const seal = new UdpDatagramSeal(session.accessToken, session.udpKey);
 * socket.send(seal.seal(Buffer.from(JSON.stringify(frame))));
 * const body = seal.open(reply); // undefined: not this session's, forged, or a replay
 * ```
 */
export class UdpDatagramSeal {
  readonly #sid: Buffer;
  readonly #key: KeyObject;
  readonly #replies = new UdpReplayWindow();
  // Counted up from the clock in microseconds, so a new link of the same session keeps increasing.
  #nextSeq = BigInt(Date.now()) * 1000n;

  /**
   * @param accessToken - the session access token; its SHA-256 names the session.
   * @param udpKey - the upgrade answer's `udpKey`, base64url of 32 bytes.
   */
  constructor(accessToken: string, udpKey: string) {
    this.#sid = createHash('sha256').update(accessToken, 'utf8').digest().subarray(0, UDP_SID_BYTES);
    this.#key = createSecretKey(Buffer.from(udpKey, 'base64url'));
  }

  /** A request body sealed into a datagram with the next sequence number. */
  seal(body: Uint8Array): Uint8Array {
    const datagram = layUdpDatagram(this.#sid, this.#nextSeq++, body);
    const macAt = datagram.length - UDP_MAC_BYTES;
    datagram.set(mac(this.#key, datagram.subarray(0, macAt)), macAt);
    return datagram;
  }

  /** The body of a reply of this session with a valid MAC and a new sequence number; undefined for anything else. */
  open(datagram: Uint8Array): Uint8Array | undefined {
    const parts = readUdpDatagram(datagram);
    if (parts === undefined || !this.#sid.equals(parts.sid)) return undefined;
    if (!timingSafeEqual(mac(this.#key, parts.signed), parts.mac)) return undefined;
    return this.#replies.accept(parts.seq) ? parts.body : undefined;
  }
}
