import { connect, type Socket } from 'node:net';
import { Worker } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { guarded, type RedisClient } from './redis-connection.js';

/** An echo server on its own thread, so it answers while this thread's event loop is stalled. */
const ECHO_SERVER = `
  const { createServer } = require('node:net');
  const { parentPort } = require('node:worker_threads');
  const server = createServer((socket) => socket.on('data', (data) => socket.write(data)));
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
      socket.write('PONG');
    }));
    stall(300); // the echo lands in the socket buffer while the timeout is already overdue
    await expect(answer).resolves.toBe('PONG');
  });

  it('fails with unavailable when no reply comes in time', async () => {
    await expect(guarded(client, 20, () => new Promise(() => {}))).rejects.toMatchObject({ code: 'unavailable' });
  });
});
