import { EventEmitter } from 'node:events';
import { PassThrough } from 'node:stream';
import { ConnectionRegistry, silentLoggerFactory } from '@portcullis/core';
import type { GateReply } from '@portcullis/protocol';
import type { WebSocket } from 'ws';
import { describe, expect, it } from 'vitest';
import { Heartbeat } from './heartbeat.js';
import { WebSocketConnection } from './ws-connection.js';
import { resolveWebSocketOptions } from './ws-options.js';

/** The part of a `ws` socket the connection uses, with a send buffer the test controls. */
class FakeSocket extends EventEmitter {
  readonly readyState = 1;
  bufferedAmount = 0;
  isPaused = false;
  readonly flushCallbacks: Array<() => void> = [];
  pause(): void {
    this.isPaused = true;
  }
  resume(): void {
    this.isPaused = false;
  }
  send(_text: string, onFlushed?: () => void): void {
    if (onFlushed) this.flushCallbacks.push(onFlushed);
  }
  terminated = false;
  terminate(): void {
    this.terminated = true;
  }
  close(): void {}
}

function deferredReplies() {
  const pending: Array<(reply: GateReply) => void> = [];
  const dispatcher = {
    dispatchText: () => new Promise<GateReply>((resolve) => pending.push(resolve)),
    dispatch: () => new Promise<GateReply>((resolve) => pending.push(resolve)),
    admit: () => Promise.reject(new Error('not used')),
  };
  return { dispatcher, answer: (i: number, size: number, char = 'x') => pending[i]!({ id: i, ok: true, data: char.repeat(size) }) };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));
const registry = () => new ConnectionRegistry({ onRevocation: () => () => undefined }, silentLoggerFactory);

describe('WebSocketConnection backpressure', () => {
  it('resumes reading once the send buffer drains, even when the reply that drains it was sent below the pause mark', async () => {
    const ws = new FakeSocket();
    const { dispatcher, answer } = deferredReplies();
    const options = resolveWebSocketOptions({ dispatcher: dispatcher as never, registry: registry(), maxBufferedBytes: 1000, heartbeatIntervalMs: 0 });
    new WebSocketConnection(ws as unknown as WebSocket, new PassThrough(), { clientId: 'c1', remoteAddress: undefined, handshake: 'done' }, options, new Heartbeat(0), silentLoggerFactory.create('test'));
    ws.emit('message', Buffer.from('{}'), false);
    ws.emit('message', Buffer.from('{}'), false);

    answer(0, 600);
    await tick();
    expect(ws.isPaused).toBe(true);

    ws.bufferedAmount = 300;
    answer(1, 100);
    await tick();
    ws.flushCallbacks.shift()!();
    expect(ws.isPaused).toBe(true);

    ws.bufferedAmount = 0;
    for (const flushed of ws.flushCallbacks.splice(0)) flushed();
    expect(ws.isPaused).toBe(false);
  });

  it('counts the send buffer in bytes, not characters: 400 euro signs are 1,200 bytes', async () => {
    const connect = () => {
      const ws = new FakeSocket();
      const replies = deferredReplies();
      const options = resolveWebSocketOptions({ dispatcher: replies.dispatcher as never, registry: registry(), maxBufferedBytes: 1000, heartbeatIntervalMs: 0 });
      new WebSocketConnection(ws as unknown as WebSocket, new PassThrough(), { clientId: 'c1', remoteAddress: undefined, handshake: 'done' }, options, new Heartbeat(0), silentLoggerFactory.create('test'));
      ws.emit('message', Buffer.from('{}'), false);
      return { ws, ...replies };
    };
    const ascii = connect();
    ascii.answer(0, 400);
    await tick();
    expect(ascii.ws.terminated).toBe(false);
    const euros = connect();
    euros.answer(0, 400, '€');
    await tick();
    expect(euros.ws.terminated).toBe(true);
  });
});

describe('WebSocketConnection reads', () => {
  it('runs ws\'s data listener corked, as the one listener of the socket, which ws\'s own removeListener still removes', () => {
    const socket = new PassThrough();
    const corkedWhileRead: number[] = [];
    // Stands for ws's `socketOnData`, added before the connection is built.
    function socketOnData(this: PassThrough, _chunk: Buffer): void {
      expect(this).toBe(socket);
      corkedWhileRead.push(socket.writableCorked);
    }
    socket.on('data', socketOnData);
    const { dispatcher } = deferredReplies();
    const options = resolveWebSocketOptions({ dispatcher: dispatcher as never, registry: registry(), heartbeatIntervalMs: 0 });
    new WebSocketConnection(new FakeSocket() as unknown as WebSocket, socket, { clientId: 'c1', remoteAddress: undefined, handshake: 'done' }, options, new Heartbeat(0), silentLoggerFactory.create('test'));

    expect(socket.listenerCount('data')).toBe(1);
    socket.emit('data', Buffer.from('two messages'));
    expect(corkedWhileRead).toEqual([1]);
    expect(socket.writableCorked).toBe(0);
    socket.removeListener('data', socketOnData);
    expect(socket.listenerCount('data')).toBe(0);
  });

  it('flanks the read with a cork and an uncork listener when the socket holds anything but one plain listener', () => {
    for (const listen of ['two listeners', 'a once listener'] as const) {
      const socket = new PassThrough();
      const corkedWhileRead: number[] = [];
      const record = () => corkedWhileRead.push(socket.writableCorked);
      if (listen === 'two listeners') socket.on('data', record).on('data', record);
      else socket.once('data', record);
      const { dispatcher } = deferredReplies();
      const options = resolveWebSocketOptions({ dispatcher: dispatcher as never, registry: registry(), heartbeatIntervalMs: 0 });
      new WebSocketConnection(new FakeSocket() as unknown as WebSocket, socket, { clientId: 'c1', remoteAddress: undefined, handshake: 'done' }, options, new Heartbeat(0), silentLoggerFactory.create('test'));

      socket.emit('data', Buffer.from('a read'));
      expect(corkedWhileRead, listen).toEqual(listen === 'two listeners' ? [1, 1] : [1]);
      expect(socket.writableCorked, listen).toBe(0);
      // A once listener stays a once listener.
      socket.emit('data', Buffer.from('another read'));
      expect(corkedWhileRead.length, listen).toBe(listen === 'two listeners' ? 4 : 1);
    }
  });
});
