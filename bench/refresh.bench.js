/**
 * The in-band refresh round trip: a `{"type":"refresh"}` frame on an open WebSocket,
 * answered with the new session pair (the socket goes on under it), beside a gated
 * request on the same socket (the floor: one frame each way plus a session check) and
 * beside `POST /auth/refresh` over HTTP keep-alive (what a client did before). In-memory
 * store, server and client in one process, sequential round trips.
 */
import 'reflect-metadata';
import { Agent, createServer, request } from 'node:http';
import { Gate, Portal, SessionShield, silentLoggerFactory } from '@portcullis/core';
import { createPortcullisApp, JwtAuthController } from '@portcullis/express';
import { createMemoryTestStack } from '@portcullis/core/testing';
import { attachWebSocketTransport } from '@portcullis/ws';
import WebSocket from 'ws';
import { opsPerSecond } from './lib/measure.js';

export const title = 'In-band session refresh round trip (one process, in memory)';
export const defaults = { rounds: 5, durationMs: 1000 };

class RefreshBenchPortal {
  ping() {
    return 'pong';
  }
}
const method = (name) => Object.getOwnPropertyDescriptor(RefreshBenchPortal.prototype, name);
Gate('ping')(RefreshBenchPortal.prototype, 'ping', method('ping'));
SessionShield(RefreshBenchPortal.prototype, 'ping', method('ping'));
Portal('/bench')(RefreshBenchPortal);

class BenchAuthController extends JwtAuthController {}

const relative = (a, b) => Number((a / b).toPrecision(3));

export async function run({ rounds = 5, durationMs = 1000 } = {}) {
  const stack = await createMemoryTestStack({ portals: [RefreshBenchPortal] });
  const server = createServer(createPortcullisApp(stack.container, { controllers: [BenchAuthController] }));
  const transport = attachWebSocketTransport(server, { loggers: silentLoggerFactory, dispatcher: stack.dispatcher, registry: stack.registry });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  const upgrade = () => stack.sessions.upgrade(stack.issuer.issueLoginPair('player-42', { name: 'alice' }).accessToken);

  let session = await upgrade();
  const socket = new WebSocket(`ws://127.0.0.1:${port}/ws`, { headers: { authorization: `Bearer ${session.accessToken}` } });
  await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
  let waiting;
  socket.on('message', (data) => waiting?.(JSON.parse(String(data))));
  const roundTrip = (frame) => new Promise((resolve) => {
    waiting = resolve;
    socket.send(JSON.stringify(frame));
  });

  let id = 0;
  const measured = [];
  const options = { rounds, durationMs, batch: 16 };
  measured.push(['gated request on the socket (floor)', await opsPerSecond(async () => {
    const reply = await roundTrip({ id: ++id, portal: '/bench', gate: 'ping' });
    if (!reply.ok) throw new Error('bench: the gate refused');
  }, options)]);
  measured.push(['in-band refresh frame, socket kept', await opsPerSecond(async () => {
    const reply = await roundTrip({ type: 'refresh', token: session.refreshToken });
    if (!reply.ok) throw new Error(`bench: refresh refused (${reply.error?.code})`);
    session = reply;
  }, options)]);
  socket.close();

  let httpSession = await upgrade();
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const postRefresh = (refreshToken) => new Promise((resolve, reject) => {
    const body = JSON.stringify({ refreshToken });
    const req = request({ host: '127.0.0.1', port, path: '/auth/refresh', method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (chunk) => (text += chunk)).on('end', () => (res.statusCode === 200 ? resolve(JSON.parse(text)) : reject(new Error(`bench: HTTP ${res.statusCode}`))));
    });
    req.on('error', reject).end(body);
  });
  measured.push(['POST /auth/refresh (HTTP keep-alive)', await opsPerSecond(async () => {
    httpSession = await postRefresh(httpSession.refreshToken);
  }, options)]);
  agent.destroy();

  await transport.close();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await stack.close();

  const [floor, , http] = measured.map(([, ops]) => ops);
  const columns = ['case', 'round trips/s', 'µs/round trip', 'ratio to gated request', 'ratio to HTTP refresh'];
  const rows = measured.map(([name, ops]) => ({
    case: name,
    'round trips/s': Math.round(ops),
    'µs/round trip': Math.round(1e6 / ops),
    'ratio to gated request': relative(ops, floor),
    'ratio to HTTP refresh': relative(ops, http),
  }));
  const notes = [
    'an in-band refresh rotates the pair (take the refresh entry, write the new pair, mark the used token) and moves the socket to the new access token; ratio < 1 means slower than the gated request',
  ];
  return { columns, rows, notes };
}
