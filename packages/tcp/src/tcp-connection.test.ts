import { once } from 'node:events';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { ConnectionRegistry, silentLoggerFactory } from '@portcullis/core';
import { TurnBudget } from '@portcullis/core/transport';
import { afterEach, describe, expect, it } from 'vitest';
import { TcpConnection } from './tcp-connection.js';
import { resolveTcpOptions } from './tcp-options.js';

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe('TcpConnection and the event loop turn budget', () => {
  let server: Server | undefined;
  let client: Socket | undefined;
  afterEach(async () => {
    client?.destroy();
    if (server) await new Promise((resolve) => server!.close(resolve));
    server = client = undefined;
  });

  /** A real connection on 127.0.0.1 whose turns have run `overdueMs` past their timers; answers the server's socket once it has read `bytes`. */
  async function readPast(overdueMs: number, bytes: Buffer): Promise<Socket> {
    const registry = new ConnectionRegistry({ onRevocation: () => () => undefined }, silentLoggerFactory);
    const options = resolveTcpOptions({ dispatcher: { dispatch: () => undefined, dispatchText: () => undefined } as never, registry });
    const budget = new TurnBudget({ overdueMs: () => overdueMs }, 30);
    const accepted = new Promise<Socket>((resolve) => {
      server = createServer((socket) => {
        new TcpConnection(socket, options, silentLoggerFactory.create('test'), undefined, budget);
        socket.once('data', () => resolve(socket));
      });
    });
    server!.listen(0, '127.0.0.1');
    await once(server!, 'listening');
    const { port } = server!.address() as { port: number };
    client = createConnection({ port, host: '127.0.0.1' });
    await once(client, 'connect');
    client.write(bytes);
    return accepted;
  }

  it('pauses a socket whose read was handled past the budget until the next turn', async () => {
    const socket = await readPast(31, Buffer.from([0, 0]));
    expect(socket.isPaused()).toBe(true);
    await nextTurn();
    expect(socket.isPaused()).toBe(false);
  });

  it('keeps reading within the budget', async () => {
    const socket = await readPast(30, Buffer.from([0, 0]));
    expect(socket.isPaused()).toBe(false);
  });
});
