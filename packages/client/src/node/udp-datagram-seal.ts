/**
 * The client's side of authenticated UDP datagrams: seals requests with the
 * session's UDP key and its own sequence numbers, and accepts only replies of the
 * same session whose MAC checks out and whose sequence number is new.
 */
import { Buffer } from 'node:buffer';
import { createHash } from 'node:crypto';
import { layUdpDatagram, readUdpDatagram, UDP_SID_BYTES, UdpMacKey, UdpReplayWindow } from '@portcullis/protocol';

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
  readonly #key: UdpMacKey;
  readonly #replies = new UdpReplayWindow();
  // Counted up from the clock in microseconds, so a new link of the same session keeps increasing.
  #nextSeq = Date.now() * 1000;

  /**
   * @param accessToken - the session access token; its SHA-256 names the session.
   * @param udpKey - the upgrade answer's `udpKey`, base64url of 32 bytes.
   */
  constructor(accessToken: string, udpKey: string) {
    this.#sid = createHash('sha256').update(accessToken, 'utf8').digest().subarray(0, UDP_SID_BYTES);
    this.#key = new UdpMacKey(Buffer.from(udpKey, 'base64url'));
  }

  /** A request body sealed into a datagram with the next sequence number. */
  seal(body: Uint8Array): Uint8Array {
    const datagram = layUdpDatagram(this.#sid, this.#nextSeq++, body);
    this.#key.sign(datagram);
    return datagram;
  }

  /** The body of a reply of this session with a valid MAC and a new sequence number; undefined for anything else. */
  open(datagram: Uint8Array): Uint8Array | undefined {
    const parts = readUdpDatagram(datagram);
    if (parts === undefined || !this.#sid.equals(parts.sid)) return undefined;
    if (!this.#key.verify(datagram)) return undefined;
    return this.#replies.acceptSplit(parts.seqHigh, parts.seqLow) ? parts.body : undefined;
  }
}
