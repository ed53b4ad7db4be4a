/**
 * Fuzz of the protocol's entry points below the sockets: 10,000 seeded hostile
 * inputs (random bytes, JSON noise, truncated and corrupted frames, deep nesting)
 * thrown at FrameDecoder, GateDispatcher.dispatchText, the auth-frame reader and
 * ConnectionProtocol.receive in every handshake mode. Nothing may throw or reject
 * except FrameDecoder's documented FrameTooLargeError; every answer is a reply of
 * the documented shape; and a real request still succeeds afterwards.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConnectionProtocol, type HandshakeMode } from '@portcullis/core/transport';
import { encodeFrame, FrameDecoder, FrameTooLargeError, readAuthFrame } from '@portcullis/protocol';
import { createMemoryTestStack, type TestStack } from '@portcullis/core/testing';
import { TestGamePortal } from '../conformance/support/test-portal.js';
import { fuzzInputs, seededRandom } from './support/fuzz-inputs.js';

const SEED = 0x5eed_0007;
const COUNT = 10_000;
const inputs = fuzzInputs(SEED, COUNT);
const WIRE_CODES = ['unauthorized', 'forbidden', 'not_found', 'bad_request', 'internal', 'unavailable', 'rate_limited', 'overloaded'];

let stack: TestStack;
const escaped: unknown[] = [];
const onUnhandled = (reason: unknown) => escaped.push(reason);

beforeAll(async () => {
  process.on('unhandledRejection', onUnhandled);
  stack = await createMemoryTestStack({ portals: [TestGamePortal] });
  // These loops feed 10,000 inputs without yielding (deep nesting included), so the event loop is
  // seconds behind by design; shedding (tested on its own) would answer overloaded instead.
  stack.dispatcher.shedWhenBehind(false);
});
afterAll(async () => {
  process.off('unhandledRejection', onUnhandled);
  await stack.close();
});

function expectReplyShape(reply: unknown): void {
  const r = reply as { id: unknown; ok: unknown; error?: { code: unknown; message: unknown } };
  expect(r.id === null || typeof r.id === 'number').toBe(true);
  expect(typeof r.ok).toBe('boolean');
  if (r.ok === false) {
    expect(WIRE_CODES).toContain(r.error?.code);
    expect(typeof r.error?.message).toBe('string');
  }
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 20));

describe('fuzz: FrameDecoder', () => {
  it('survives garbage streams, returns every whole frame split at random, and holds truncated ones', () => {
    const random = seededRandom(SEED);
    const decoder = new FrameDecoder({ maxFrameBytes: 64 * 1024 });
    let tooLarge = 0;
    let roundTrips = 0;
    for (const [i, input] of inputs.entries()) {
      const mode = i % 3;
      if (mode === 0) {
        try {
          decoder.push(input.bytes);
        } catch (error) {
          expect(error).toBeInstanceOf(FrameTooLargeError);
          tooLarge++;
        }
        decoder.reset();
        continue;
      }
      const frame = encodeFrame(input.bytes);
      if (mode === 1) {
        const received: Uint8Array[] = [];
        for (let at = 0; at < frame.length; ) {
          const step = 1 + Math.floor(random() * 16);
          received.push(...decoder.push(frame.subarray(at, at + step)));
          at += step;
        }
        expect(received.length).toBe(1);
        expect(Buffer.compare(received[0]!, input.bytes)).toBe(0);
        roundTrips++;
      } else {
        const cut = Math.floor(random() * frame.length);
        expect(decoder.push(frame.subarray(0, cut))).toEqual([]);
        expect(decoder.bufferedBytes).toBe(cut < 4 ? cut : cut - 4); // a read length prefix is no longer buffered
        decoder.reset();
      }
      expect(decoder.bufferedBytes).toBe(0);
    }
    expect(roundTrips).toBeGreaterThan(3000);
    expect(tooLarge).toBeGreaterThan(0);
  });
});

describe('fuzz: GateDispatcher.dispatchText and the auth-frame reader', () => {
  it('answers every input, as text and as bytes, with a well-formed reply', async () => {
    const conn = { clientId: 'fuzz', transport: 'ws' as const, remoteAddress: '127.0.0.1', credential: undefined, memo: new Map() };
    const codes = new Map<string, number>();
    for (const input of inputs) {
      const replies = await Promise.all([
        stack.dispatcher.dispatchText(input.bytes, conn),
        ...(input.text === undefined ? [] : [stack.dispatcher.dispatchText(input.text, conn)]),
      ]);
      for (const reply of replies) {
        expectReplyShape(reply);
        const code = reply.ok ? 'ok' : reply.error.code;
        codes.set(code, (codes.get(code) ?? 0) + 1);
      }
    }
    expect(codes.get('bad_request')).toBeGreaterThan(0);
    expect(codes.get('ok')).toBeGreaterThan(0);
    expect(await stack.dispatcher.dispatchText('{"id":1,"portal":"/game","gate":"ping"}', conn)).toEqual({ id: 1, ok: true, data: 'pong' });
  });

  it('reads an auth frame or nothing from every input, never throwing', () => {
    let frames = 0;
    for (const input of inputs) {
      let raw: unknown;
      try {
        raw = JSON.parse(input.text ?? '');
      } catch {
        raw = input.text;
      }
      const frame = readAuthFrame(raw);
      if (frame === undefined) continue;
      frames++;
      expect(frame.type).toBe('auth');
      expect(frame.token === null || typeof frame.token === 'string').toBe(true);
    }
    expect(frames).toBeGreaterThan(0);
  });
});

describe('fuzz: ConnectionProtocol.receive', () => {
  it.each<HandshakeMode>(['required', 'optional', 'done'])('handshake %s: no input throws, every frame sent is JSON, the last connection still serves', async (handshake) => {
    let sent: string[] = [];
    let closes = 0;
    let protocol: ConnectionProtocol | undefined;
    let serial = 0;
    const open = () => {
      let closed = false;
      const p = new ConnectionProtocol({
        dispatcher: stack.dispatcher,
        registry: stack.registry,
        transport: 'tcp',
        clientId: `fuzz-${handshake}-${serial++}`,
        remoteAddress: '127.0.0.1',
        handshake,
        send: (text) => sent.push(text),
        close: () => {
          closed = true;
          closes++;
        },
      });
      return { p, isClosed: () => closed };
    };
    let current = open();
    for (const [i, input] of inputs.entries()) {
      if (current.isClosed()) current = open();
      current.p.receive(i % 2 === 0 || input.text === undefined ? input.bytes : input.text);
      if (i % 500 === 499) await settle();
    }
    await settle();
    for (const text of sent) expect(() => JSON.parse(text)).not.toThrow();
    current.p.dispose();

    sent = [];
    protocol = open().p;
    if (handshake !== 'done') protocol.receive(JSON.stringify({ type: 'auth', token: null }));
    protocol.receive(JSON.stringify({ id: 42, portal: '/game', gate: 'ping' }));
    await settle();
    expect(sent.map((t) => JSON.parse(t))).toContainEqual({ id: 42, ok: true, data: 'pong' });
    protocol.dispose();
    if (handshake === 'required') expect(closes).toBeGreaterThan(0);
    expect(stack.registry.size).toBe(0);
  });

  it('let no promise reject unhandled', () => {
    expect(escaped).toEqual([]);
  });
});
