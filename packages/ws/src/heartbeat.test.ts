import { afterEach, describe, expect, it, vi } from 'vitest';
import type { WebSocket } from 'ws';
import { Heartbeat } from './heartbeat.js';

function fakeSocket() {
  const listeners = new Map<string, () => void>();
  return {
    on: (event: string, listener: () => void) => listeners.set(event, listener),
    ping: vi.fn(),
    terminate: vi.fn(),
    pong: () => listeners.get('pong')?.(),
  };
}
const asWs = (s: ReturnType<typeof fakeSocket>) => s as unknown as WebSocket;

afterEach(() => vi.useRealTimers());

describe('Heartbeat', () => {
  it('pings a slice of the sockets per tick, not all at once, and every socket once per interval', () => {
    vi.useFakeTimers();
    const heartbeat = new Heartbeat(1000);
    const sockets = Array.from({ length: 100 }, fakeSocket);
    for (const s of sockets) heartbeat.add(asWs(s));
    vi.advanceTimersByTime(100);
    expect(sockets.filter((s) => s.ping.mock.calls.length > 0)).toHaveLength(10);
    vi.advanceTimersByTime(900);
    expect(sockets.every((s) => s.ping.mock.calls.length === 1)).toBe(true);
    heartbeat.stop();
  });

  it('terminates a socket that showed no life since its last ping, and keeps one that answered', () => {
    vi.useFakeTimers();
    const heartbeat = new Heartbeat(1000);
    const silent = fakeSocket();
    const lively = fakeSocket();
    heartbeat.add(asWs(silent));
    heartbeat.add(asWs(lively));
    vi.advanceTimersByTime(1000);
    expect(silent.ping).toHaveBeenCalledTimes(1);
    lively.pong();
    vi.advanceTimersByTime(250); // the next round: one slice per tick
    expect(silent.terminate).toHaveBeenCalledTimes(1);
    expect(lively.terminate).not.toHaveBeenCalled();
    expect(lively.ping).toHaveBeenCalledTimes(2);
    heartbeat.stop();
  });

  it('keeps a socket whose messages mark it alive, without a pong', () => {
    vi.useFakeTimers();
    const heartbeat = new Heartbeat(1000);
    const talker = fakeSocket();
    const silent = fakeSocket();
    const liveness = heartbeat.add(asWs(talker));
    heartbeat.add(asWs(silent));
    vi.advanceTimersByTime(1000);
    expect(talker.ping).toHaveBeenCalledTimes(1);
    liveness.alive = true; // what the connection does when a message arrives
    vi.advanceTimersByTime(1000);
    expect(talker.terminate).not.toHaveBeenCalled();
    expect(silent.terminate).toHaveBeenCalledTimes(1);
    heartbeat.stop();
  });

  it('watches the record the caller hands it: its own field keeps the socket, a pong sets it, silence ends it', () => {
    vi.useFakeTimers();
    const heartbeat = new Heartbeat(1000);
    const socket = fakeSocket();
    const connection = { alive: false, name: 'the connection itself' };
    expect(heartbeat.add(asWs(socket), connection)).toBe(connection);
    expect(connection.alive).toBe(true);
    vi.advanceTimersByTime(1000);
    expect(socket.ping).toHaveBeenCalledTimes(1);
    expect(connection.alive).toBe(false);
    connection.alive = true; // a message
    vi.advanceTimersByTime(1000);
    expect(socket.terminate).not.toHaveBeenCalled();
    socket.pong();
    expect(connection.alive).toBe(true);
    vi.advanceTimersByTime(1000);
    expect(socket.terminate).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1000); // a round with neither
    expect(socket.terminate).toHaveBeenCalledTimes(1);
    heartbeat.stop();
  });

  it('watches nothing when the interval is 0', () => {
    vi.useFakeTimers();
    const heartbeat = new Heartbeat(0);
    const socket = fakeSocket();
    heartbeat.add(asWs(socket)).alive = false;
    vi.advanceTimersByTime(10_000);
    expect(socket.ping).not.toHaveBeenCalled();
    expect(socket.terminate).not.toHaveBeenCalled();
  });
});
