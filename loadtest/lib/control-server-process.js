/**
 * The control of the WebSocket load test: a bare `ws` server with no authentication at
 * all, answering `move` with the same reply the example's gate sends, started, pinned
 * and measured exactly like the game server. Its numbers are the floor that `ws`, Node
 * and this machine set; the game server's report is read beside them.
 */
import { WebSocketServer } from 'ws';
import { serveParent } from '../../bench/lib/child-rpc.js';
import { startLoopMonitor } from './loop-monitor.js';

const wss = new WebSocketServer({ port: 0, host: '127.0.0.1', perMessageDeflate: false, maxPayload: 64 * 1024 });
await new Promise((resolve) => wss.once('listening', resolve));
wss.on('connection', (ws) => {
  ws.on('error', () => {});
  ws.on('message', (data) => {
    let request;
    try {
      request = JSON.parse(data.toString());
    } catch {
      return;
    }
    ws.send(JSON.stringify({ type: 'reply', id: request.id, ok: true, data: { x: Number(request.data?.x), y: Number(request.data?.y), by: 'control' } }));
  });
});
const loop = startLoopMonitor();

const handlers = {
  stats({ gc = false } = {}) {
    if (gc && globalThis.gc) for (let i = 0; i < 2; i++) globalThis.gc();
    const memory = process.memoryUsage();
    return {
      at: Date.now(),
      rss: memory.rss,
      heapUsed: memory.heapUsed,
      cpuMicros: (({ user, system }) => user + system)(process.cpuUsage()),
      connections: { ws: wss.clients.size },
      problems: { warn: 0, error: 0 },
    };
  },
  'loop-reset': () => loop.reset(),
  'loop-read': () => loop.read(),
  async close() {
    for (const ws of wss.clients) ws.terminate();
    await new Promise((resolve) => wss.close(resolve));
    setImmediate(() => process.exit(0));
    return null;
  },
};

serveParent(handlers, { wsUrl: `ws://127.0.0.1:${wss.address().port}` });
