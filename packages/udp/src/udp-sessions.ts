/**
 * What the UDP transport keeps per session `sid` that passed a MAC check: the
 * session's UDP key, the replay window of its datagrams and the next sequence
 * number of its replies. Bounded: a `sid` gets an entry only after a MAC under a
 * key the server derived checked out, and past `maxEntries` the least recently
 * used entry goes.
 */
import type { UdpKeyring } from '@portcullis/core';
import { layUdpDatagram, UDP_HEADER_BYTES, UDP_MAC_BYTES, UDP_SID_BYTES, UdpMacKey, UdpReplayWindow } from '@portcullis/protocol';

/**
 * One session's UDP state in this process.
 *
 * @example
 * ```ts
 * if (!entry.window.accept(parts.seq)) return; // replay
 * ```
 */
export interface UdpSessionEntry {
  readonly sid: Uint8Array;
  readonly sidHex: string;
  /** The session's UDP key, prepared for MACs. */
  readonly key: UdpMacKey;
  readonly window: UdpReplayWindow;
  /** Sequence number of the next reply (a safe integer: counted up from the clock in microseconds). */
  nextSeq: number;
}

/**
 * The entries of the sessions whose datagrams this process has authenticated.
 *
 * @example
 * ```ts
 * const sessions = new UdpSessions(keyring, 65_536);
 * const entry = sessions.authenticate(datagram, sidHex); // undefined: bad MAC or a sid no key verifies
 * ```
 */
export class UdpSessions {
  private readonly entries = new Map<string, UdpSessionEntry>();
  /** Entries dropped to stay within `maxEntries`. */
  evicted = 0;

  constructor(
    private readonly keyring: UdpKeyring,
    private readonly maxEntries: number,
  ) {}

  /** Entries held now. */
  get size(): number {
    return this.entries.size;
  }

  /**
   * The session entry of a datagram whose MAC checks out, created on its session's first such
   * datagram; undefined otherwise. `datagram` is well-formed (`readUdpDatagram` answered it).
   */
  authenticate(datagram: Uint8Array, sidHex: string): UdpSessionEntry | undefined {
    const known = this.entries.get(sidHex);
    if (known !== undefined) {
      if (!known.key.verify(datagram)) return undefined;
      this.entries.delete(sidHex);
      this.entries.set(sidHex, known);
      return known;
    }
    const sid = datagram.subarray(1, 1 + UDP_SID_BYTES);
    for (const candidate of this.keyring.keysFor(sid)) {
      const key = new UdpMacKey(candidate);
      if (key.verify(datagram)) return this.add(sid, sidHex, key);
    }
    return undefined;
  }

  /** A reply sealed for the session: its own next sequence number and the MAC under the session's key. */
  seal(entry: UdpSessionEntry, body: Uint8Array): Uint8Array {
    // A pooled Buffer: a new Uint8Array of a datagram's size costs more than the MAC's hashing.
    const datagram = layUdpDatagram(entry.sid, entry.nextSeq++, body, Buffer.allocUnsafe(UDP_HEADER_BYTES + body.length + UDP_MAC_BYTES));
    entry.key.sign(datagram);
    return datagram;
  }

  private add(sid: Uint8Array, sidHex: string, key: UdpMacKey): UdpSessionEntry {
    if (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
      this.evicted++;
    }
    // Replies count up from the clock in microseconds, so they keep increasing for the client
    // across a restart of this process or a move to another server.
    const entry: UdpSessionEntry = { sid: Uint8Array.from(sid), sidHex, key, window: new UdpReplayWindow(), nextSeq: Date.now() * 1000 };
    this.entries.set(sidHex, entry);
    return entry;
  }
}
