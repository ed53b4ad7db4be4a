/**
 * What the UDP transport keeps per session `sid` that passed a MAC check: the
 * session's UDP key, the replay window of its datagrams and the next sequence
 * number of its replies. Bounded: a `sid` gets an entry only after a MAC under a
 * key the server derived checked out, and past `maxEntries` the least recently
 * used entry goes.
 */
import { createSecretKey, type KeyObject } from 'node:crypto';
import type { UdpKeyring } from '@portcullis/core';
import { udpMac, udpMacMatches } from '@portcullis/core/transport';
import { layUdpDatagram, UDP_MAC_BYTES, UdpReplayWindow, type UdpDatagramParts } from '@portcullis/protocol';

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
  readonly key: KeyObject;
  readonly window: UdpReplayWindow;
  /** Sequence number of the next reply. */
  nextSeq: bigint;
}

/**
 * The entries of the sessions whose datagrams this process has authenticated.
 *
 * @example
 * ```ts
 * const sessions = new UdpSessions(keyring, 65_536);
 * const entry = sessions.authenticate(parts); // undefined: bad MAC or a sid no key verifies
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

  /** The session entry of a datagram whose MAC checks out, created on its session's first such datagram; undefined otherwise. */
  authenticate(parts: UdpDatagramParts, sidHex: string): UdpSessionEntry | undefined {
    const known = this.entries.get(sidHex);
    if (known !== undefined) {
      if (!udpMacMatches(known.key, parts.signed, parts.mac)) return undefined;
      this.entries.delete(sidHex);
      this.entries.set(sidHex, known);
      return known;
    }
    for (const candidate of this.keyring.keysFor(parts.sid)) {
      if (udpMacMatches(candidate, parts.signed, parts.mac)) return this.add(parts.sid, sidHex, createSecretKey(candidate));
    }
    return undefined;
  }

  /** A reply sealed for the session: its own next sequence number and the MAC under the session's key. */
  seal(entry: UdpSessionEntry, body: Uint8Array): Uint8Array {
    const datagram = layUdpDatagram(entry.sid, entry.nextSeq++, body);
    const macAt = datagram.length - UDP_MAC_BYTES;
    datagram.set(udpMac(entry.key, datagram.subarray(0, macAt)), macAt);
    return datagram;
  }

  private add(sid: Uint8Array, sidHex: string, key: KeyObject): UdpSessionEntry {
    if (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
      this.evicted++;
    }
    // Replies count up from the clock in microseconds, so they keep increasing for the client
    // across a restart of this process or a move to another server.
    const entry: UdpSessionEntry = { sid: Uint8Array.from(sid), sidHex, key, window: new UdpReplayWindow(), nextSeq: BigInt(Date.now()) * 1000n };
    this.entries.set(sidHex, entry);
    return entry;
  }
}
