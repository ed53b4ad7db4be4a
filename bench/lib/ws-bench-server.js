/**
 * The server side of bench/ws.bench.js, in its own process so its CPU can be
 * measured alone (process.cpuUsage) and the clients' CPU is not counted.
 * Serves, on one HTTP server per session provider:
 *   /raw  — raw `ws` echo (bytes back),
 *   /json — JSON echo (parse, answer {id, ok, data}),
 *   /ws   — @portcullis/ws with a bench portal: gate `open` (unshielded) and
 *           `shielded` (@SessionShield), both answering their data.
 * Talks to the parent over IPC: tokens, cpu-start/cpu-stop, memory.
 */
import 'reflect-metadata';
import { createServer } from 'node:http';
import { container as rootContainer } from 'tsyringe';
import {
  ConnectionRegistry,
  GateDispatcher,
  JwtTokenIssuer,
  LOGGER_FACTORY,
  loadConfig,
  PORTCULLIS_CONFIG,
  PORTCULLIS_CONTAINER,
  registerSessionServices,
  resolveSigningKey,
  SIGNING_KEY,
  silentLoggerFactory,
  TokenSessionSync,
} from '@portcullis/core';
import { attachWebSocketTransport } from '@portcullis/ws';
import { WebSocketServer } from 'ws';
import { BenchPortal } from './bench-portal.js';
import { serveParent } from './child-rpc.js';

const KEY = Buffer.alloc(32, 5).toString('base64');

async function stack(provider, url) {
  const config = loadConfig({ env: {}, tree: { svc: { security: { mode: 'jwt', key: KEY }, persistence: { cache: { provider, url } } } } });
  const container = rootContainer.createChildContainer();
  container.register(PORTCULLIS_CONFIG, { useValue: config });
  container.register(SIGNING_KEY, { useValue: resolveSigningKey(config, silentLoggerFactory.create('bench')) });
  container.register(LOGGER_FACTORY, { useValue: silentLoggerFactory });
  container.register(PORTCULLIS_CONTAINER, { useValue: container });
  const stores = registerSessionServices(container, { keyPrefix: `bench-ws-${process.pid}` });
  await stores.ready();
  const sessions = container.resolve(TokenSessionSync);
  const issuer = container.resolve(JwtTokenIssuer);
  const dispatcher = container.resolve(GateDispatcher).register(BenchPortal);
  const registry = container.resolve(ConnectionRegistry);
  const server = createServer((_req, res) => res.writeHead(404).end());
  const transport = attachWebSocketTransport(server, { dispatcher, registry, loggers: silentLoggerFactory });
  const raw = new WebSocketServer({ noServer: true, maxPayload: 64 * 1024, perMessageDeflate: false });
  raw.on('connection', (ws, req) => {
    ws.on('error', () => {});
    if (req.url === '/raw') ws.on('message', (data, isBinary) => ws.send(data, { binary: isBinary }));
    else ws.on('message', (data) => {
      const request = JSON.parse(data.toString());
      ws.send(JSON.stringify({ id: request.id, ok: true, data: request.data }));
    });
  });
  server.on('upgrade', (req, socket, head) => {
    if (req.url === '/raw' || req.url === '/json') raw.handleUpgrade(req, socket, head, (ws) => raw.emit('connection', ws, req));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: server.address().port,
    async tokens(count) {
      const out = [];
      for (let i = 0; i < count; i++) out.push((await sessions.upgrade(issuer.issueLoginPair(`player-${i}`, { name: `p${i}` }).accessToken)).accessToken);
      return out;
    },
    async close() {
      await transport.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await sessions.close();
      await stores.close();
    },
  };
}

const stacks = { inmemory: await stack('inmemory', 'redis://127.0.0.1:1') };
if (process.env.BENCH_REDIS_URL) stacks.redis = await stack('redis', process.env.BENCH_REDIS_URL);

let cpuStart;
const handlers = {
  tokens: ({ provider, count }) => stacks[provider].tokens(count),
  'cpu-start': () => {
    cpuStart = process.cpuUsage();
    return null;
  },
  'cpu-stop': () => {
    const used = process.cpuUsage(cpuStart);
    return used.user + used.system;
  },
  memory: () => {
    for (let i = 0; i < 3; i++) globalThis.gc?.();
    return process.memoryUsage();
  },
  close: async () => {
    await Promise.all(Object.values(stacks).map((s) => s.close()));
    setImmediate(() => process.exit(0));
    return null;
  },
};

serveParent(handlers, { ports: Object.fromEntries(Object.entries(stacks).map(([name, s]) => [name, s.port])) });
