import { connect, type Socket } from 'node:net';
import { Worker } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { guarded, type RedisClient } from './redis-connection.js';

/** An echo server on its own thread, so it answers while this thread's event loop is stalled. */
const ECHO_SERVER = `
  const { createServer } = require('node:net');
  const { parentPort } = require('node:worker_threads');
  // "<ms>:<text>" is echoed as <text> after <ms> milliseconds of this thread's time.
  const server = createServer((socket) => socket.on('data', (data) => {
    const [ms, text] = data.toString().split(':');
    setTimeout(() => socket.write(text), Number(ms));
  }));
  server.listen(0, '127.0.0.1', () => parentPort.postMessage(server.address().port));
`;

/** Blocks the event loop, as a long GC pause or a starved CPU does. */
function stall(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    // busy on purpose
  }
}

describe('guarded', () => {
  let worker: Worker;
  let socket: Socket;
  const client = { isReady: true } as RedisClient;

  beforeAll(async () => {
    worker = new Worker(ECHO_SERVER, { eval: true });
    const port = await new Promise<number>((resolve) => worker.once('message', resolve));
    socket = connect({ port, host: '127.0.0.1' });
    await new Promise((resolve) => socket.once('connect', resolve));
  });
  afterAll(async () => {
    socket.destroy();
    await worker.terminate();
  });

  it('takes a reply that arrived during an event-loop stall instead of timing out with unavailable', async () => {
    const answer = guarded(client, 50, () => new Promise<string>((resolve) => {
      socket.once('data', (data) => resolve(data.toString()));
      socket.write('0:PONG');
    }));
    stall(300); // the echo lands in the socket buffer while the timeout is already overdue
    await expect(answer).resolves.toBe('PONG');
  });

  it('gives an operation back the time its own event loop was stalled before failing it', async () => {
    const answer = guarded(client, 100, () => new Promise<string>((resolve) => {
      socket.once('data', (data) => resolve(data.toString()));
      socket.write('700:LATE'); // Redis answers 700 ms later, 100 ms after this thread is back
    }));
    stall(600); // the 100 ms timer fires 500 ms late: that time was ours, not Redis's
    await expect(answer).resolves.toBe('LATE');
  });

  it('does not count an operation answered in the loop turn its timeout came due as timed out', async () => {
    let timeouts = 0;
    // Both timers come due in the same turn, the timeout's first: the reply still wins.
    const answer = guarded(client, 50, () => new Promise<string>((resolve) => setTimeout(() => resolve('PONG'), 50)), () => timeouts++);
    await expect(answer).resolves.toBe('PONG');
    await new Promise((resolve) => setImmediate(resolve));
    expect(timeouts).toBe(0);
  });

  it('fails an operation that gets no reply after its timeout while others on the client are answered, when this process is not behind', async () => {
    // A slow Redis that still answers now and then: a server keeping up sees it at once.
    const others = setInterval(() => void guarded(client, 100, () => Promise.resolve('PONG')), 20);
    const started = performance.now();
    try {
      await expect(guarded(client, 100, () => new Promise(() => {}))).rejects.toMatchObject({ code: 'unavailable' });
    } finally {
      clearInterval(others);
    }
    expect(performance.now() - started).toBeLessThan(450);
  });

  it('keeps an operation waiting while its process is behind and reads other replies, then fails it after five timeouts of keeping up', async () => {
    // As on a cluster where one shard stopped answering and the others did not: for its
    // first second this server's event loop is busy 40 ms at a time, then it keeps up.
    const busyUntil = performance.now() + 1_000;
    const others = setInterval(() => {
      if (performance.now() < busyUntil) stall(40);
      void guarded(client, 100, () => Promise.resolve('PONG'));
    }, 20);
    const started = performance.now();
    try {
      await expect(guarded(client, 100, () => new Promise(() => {}))).rejects.toMatchObject({ code: 'unavailable' });
    } finally {
      clearInterval(others);
    }
    const waited = performance.now() - started;
    expect(waited).toBeGreaterThanOrEqual(1_000);
    expect(waited).toBeLessThan(3_000); // the busy second, then 5 × 100 ms of keeping up
  });

  it('fails with unavailable when no reply comes in time', async () => {
    await expect(guarded(client, 20, () => new Promise(() => {}))).rejects.toMatchObject({ code: 'unavailable' });
  });
});
