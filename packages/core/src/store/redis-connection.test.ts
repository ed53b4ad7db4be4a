import { connect, type Socket } from 'node:net';
import { Worker } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { silentLoggerFactory } from '../logging/logger.js';
import { closeRedisClient, guarded, openRedisClient, waitUntilReady, type RedisClient } from './redis-connection.js';
import { stall } from '../../../../test/support/event-loop.js';

const clusterNodes = inject('redisClusterNodes');

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

/**
 * Milliseconds until `guarded` fails an operation that never gets a reply (at a 100 ms
 * timeout), while `meanwhile` runs every 20 ms beside it.
 */
async function msUntilUnavailable(client: RedisClient, meanwhile: () => void): Promise<number> {
  const others = setInterval(meanwhile, 20);
  const started = performance.now();
  try {
    await expect(guarded(client, 100, () => new Promise(() => {}))).rejects.toMatchObject({ code: 'unavailable' });
  } finally {
    clearInterval(others);
  }
  return performance.now() - started;
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
    const waited = await msUntilUnavailable(client, () => void guarded(client, 100, () => Promise.resolve('PONG')));
    expect(waited).toBeLessThan(2_000); // not for as long as the others are answered
  });

  it('keeps an operation waiting for as long as its process is behind and reads the replies ahead of it', async () => {
    // For 1.5 s this server's event loop is busy 40 ms at a time while it reads replies of
    // operations sent before (the stuck operation stands for one whose reply is still queued).
    const busyUntil = performance.now() + 1_500;
    const waited = await msUntilUnavailable(client, () => {
      if (performance.now() >= busyUntil) return;
      stall(40);
      void guarded(client, 100, () => Promise.resolve('PONG'));
    });
    expect(waited).toBeGreaterThanOrEqual(1_400);
    expect(waited).toBeLessThan(3_000); // failed about one timeout after the last reply read
  });

  it('counts an operation\'s time from when its command left, not while it waited unsent behind a long loop turn', async () => {
    // node-redis writes the commands asked for in a turn from setImmediate, at the turn's end.
    const answer = guarded(client, 100, () => new Promise<string>((resolve) => {
      setImmediate(() => {
        socket.once('data', (data) => resolve(data.toString()));
        socket.write('50:SENT'); // Redis answers 50 ms after the command left
      });
    }));
    stall(95); // the turn runs on; the command leaves at 95 ms, and the 100 ms timer is not late
    await expect(answer).resolves.toBe('SENT');
  });

  it('fails with unavailable when no reply comes in time', async () => {
    await expect(guarded(client, 20, () => new Promise(() => {}))).rejects.toMatchObject({ code: 'unavailable' });
  });
});

describe.skipIf(!clusterNodes)(clusterNodes ? 'guarded on a Redis Cluster' : 'guarded on a Redis Cluster — SKIPPED, redis-server not found', () => {
  let cluster: RedisClient;

  beforeAll(async () => {
    const nodes = clusterNodes!.split(',').map((node) => ({ host: node.split(':')[0]!, port: Number(node.split(':')[1]) }));
    cluster = openRedisClient({ url: `redis://${clusterNodes!.split(',')[0]}`, topology: 'cluster', nodes }, silentLoggerFactory.create('test'), 'commands');
    await waitUntilReady(cluster, 5_000);
  });
  afterAll(async () => {
    await closeRedisClient(cluster);
  });

  it('fails an operation that gets no reply after five timeouts and the stalled time, however many replies the other shards send', async () => {
    // Replies from live shards say nothing of a shard that stopped answering.
    const waited = await msUntilUnavailable(cluster, () => {
      stall(40);
      void guarded(cluster, 100, () => cluster.get(`live-${Math.random()}`)).catch(() => {});
    });
    expect(waited).toBeGreaterThanOrEqual(450);
    expect(waited).toBeLessThan(2_000); // 5 × 100 ms, plus at most 5 × 100 ms given back for stalls
  });
});
