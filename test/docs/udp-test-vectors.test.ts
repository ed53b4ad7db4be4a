/**
 * docs/udp-test-vectors.json is what a C#, C++ or Rust client is built against:
 * every vector must hold for the server's code, the Node client's code, and a
 * plain HMAC-SHA256 written out here from the byte layout in docs/protocol.md.
 */
import { createHash, createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { UdpKeyring, udpSessionId } from '@portcullis/core';
import { udpMac, udpMacMatches } from '@portcullis/core/transport';
import { layUdpDatagram, readUdpDatagram, UdpReplayWindow } from '@portcullis/protocol';
import { UdpDatagramSeal } from '../../packages/client/src/node/udp-datagram-seal.js';

interface Vectors {
  serverSecret: { signingKeyHex: string; sessions: { accessToken: string; sid: string; udpKey: string; udpKeyHex: string }[] };
  datagrams: { name: string; accessToken: string; udpKey: string; seq: string; body: string; datagram: string; mac: string }[];
  invalid: { name: string; accessToken: string; udpKey: string; datagram: string; valid: boolean }[];
  replayWindow: { sequence: string[]; accepted: boolean[] };
}

const vectors = JSON.parse(readFileSync(new URL('../../docs/udp-test-vectors.json', import.meta.url), 'utf8')) as Vectors;

/** The layout of docs/protocol.md, byte by byte, with nothing of ours. */
function byHand(accessToken: string, udpKey: string, seq: bigint, body: string): Buffer {
  const sid = createHash('sha256').update(accessToken, 'utf8').digest().subarray(0, 16);
  const seqBytes = Buffer.alloc(8);
  seqBytes.writeBigUInt64BE(seq);
  const signed = Buffer.concat([Buffer.from([0x01]), sid, seqBytes, Buffer.from(body, 'utf8')]);
  return Buffer.concat([signed, createHmac('sha256', Buffer.from(udpKey, 'base64url')).update(signed).digest().subarray(0, 16)]);
}

describe('UDP test vectors (docs/udp-test-vectors.json)', () => {
  it('the server derives each session\'s sid and udpKey from its signing key as listed', () => {
    const keyring = new UdpKeyring(Buffer.from(vectors.serverSecret.signingKeyHex, 'hex'));
    for (const session of vectors.serverSecret.sessions) {
      expect(udpSessionId(session.accessToken).toString('hex')).toBe(session.sid);
      expect(keyring.udpKeyOf(session.accessToken)).toBe(session.udpKey);
      expect(Buffer.from(session.udpKey, 'base64url').toString('hex')).toBe(session.udpKeyHex);
    }
  });

  it.each(vectors.datagrams.map((v) => [v.name, v] as const))('%s: the layout by hand, the server and the client make and read exactly these bytes', (_name, v) => {
    const seq = BigInt(v.seq);
    expect(byHand(v.accessToken, v.udpKey, seq, v.body).toString('hex')).toBe(v.datagram);
    const laid = layUdpDatagram(udpSessionId(v.accessToken), seq, Buffer.from(v.body, 'utf8'));
    laid.set(udpMac(Buffer.from(v.udpKey, 'base64url'), laid.subarray(0, laid.length - 16)), laid.length - 16);
    expect(Buffer.from(laid).toString('hex')).toBe(v.datagram);
    const parts = readUdpDatagram(Buffer.from(v.datagram, 'hex'))!;
    expect(parts.seq).toBe(seq);
    expect(Buffer.from(parts.mac).toString('hex')).toBe(v.mac);
    expect(Buffer.from(parts.body).toString('utf8')).toBe(v.body);
    expect(Buffer.from(new UdpDatagramSeal(v.accessToken, v.udpKey).open(Buffer.from(v.datagram, 'hex'))!).toString('utf8')).toBe(v.body);
  });

  it.each(vectors.invalid.map((v) => [v.name, v] as const))('%s: accepted only when marked valid, by the server and the client', (_name, v) => {
    const bytes = Buffer.from(v.datagram, 'hex');
    const parts = readUdpDatagram(bytes)!;
    const sidMatches = udpSessionId(v.accessToken).equals(parts.sid);
    expect(sidMatches && udpMacMatches(Buffer.from(v.udpKey, 'base64url'), parts.signed, parts.mac)).toBe(v.valid);
    expect(new UdpDatagramSeal(v.accessToken, v.udpKey).open(bytes) !== undefined).toBe(v.valid);
  });

  it('the replay window accepts exactly as listed', () => {
    const window = new UdpReplayWindow();
    expect(vectors.replayWindow.sequence.map((seq) => window.accept(BigInt(seq)))).toEqual(vectors.replayWindow.accepted);
  });
});
