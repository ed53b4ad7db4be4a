/**
 * Sockets that hold the example's HTTP server without ever finishing a request:
 * one that sends nothing, one that sends half a header, one that sends the headers
 * and half the body. Each is closed once `requestTimeoutMs` has passed (configured
 * small here; 30 s by default), and a complete request on another socket is served.
 */
import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import { loadConfig, silentLoggerFactory } from '@portcullis/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGameServer, type GameServer } from '../src/game-server.js';

let server: GameServer;
let port: number;

beforeAll(async () => {
  server = await createGameServer({
    config: loadConfig({ env: { SVC__SECURITY__MODE: 'jwt', SVC__SECURITY__KEY: randomBytes(32).toString('base64') }, tree: {} }),
    port: 0,
    loggers: silentLoggerFactory,
    requestTimeoutMs: 300,
  });
  port = Number(new URL((await server.listen()).http).port);
});
afterAll(() => server.close());

/** Opens a socket, writes `text`, and resolves with the ms until the server closed it ('open' after `giveUpMs`). */
function hold(text: string, giveUpMs = 4000): Promise<number | 'open'> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' });
    const started = Date.now();
    socket.on('error', () => undefined);
    socket.resume();
    socket.once('connect', () => socket.write(text));
    const giveUp = setTimeout(() => {
      socket.destroy();
      resolve('open');
    }, giveUpMs);
    socket.once('close', () => {
      clearTimeout(giveUp);
      resolve(Date.now() - started);
    });
  });
}

describe('example HTTP server timeouts', () => {
  it('closes sockets that send nothing, half a header, or half a body, after the request timeout', async () => {
    const answers = await Promise.all([
      hold(''),
      hold('GET /api/me HTTP/1.1\r\nHost: x\r\nX-Slow: '),
      hold('POST /auth/login/unamepwd HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"user'),
    ]);
    for (const answer of answers) {
      expect(answer).not.toBe('open');
      expect(answer).toBeGreaterThanOrEqual(250);
    }
    const response = await fetch(`http://127.0.0.1:${port}/nope`);
    expect(response.status).toBe(404);
  });

  it('defaults to 30 s for a complete request, headers included', async () => {
    const defaults = await createGameServer({
      config: loadConfig({ env: { SVC__SECURITY__MODE: 'jwt', SVC__SECURITY__KEY: randomBytes(32).toString('base64') }, tree: {} }),
      port: 0,
      loggers: silentLoggerFactory,
    });
    try {
      expect(defaults.httpServer.requestTimeout).toBe(30_000);
      expect(defaults.httpServer.headersTimeout).toBe(30_000);
    } finally {
      await defaults.close();
    }
  });
});
