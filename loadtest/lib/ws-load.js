/**
 * The WebSocket load generator: opens many authenticated sockets and drives
 * `move` requests on them, either paced (every client sends `rate` requests per
 * second, spread evenly over time: an open loop, so latency is measured at a
 * fixed offered load) or closed (`rate` 0: each client sends its next request
 * when the previous reply arrives: the maximum throughput). Replies on one
 * socket come in request order, so a FIFO of send times per socket gives each
 * reply's latency.
 */
import { performance } from 'node:perf_hooks';
import WsWebSocket from 'ws';
import { LeanWebSocket } from './lean-websocket.js';

/**
 * The generator's WebSocket client: lean-websocket.js, or the `ws` package with
 * LOADTEST_WS_CLIENT=ws (about a third more of the generator's CPU per message,
 * and event-loop stalls of 50–110 ms at 20,000 messages a second; see docs/performance.md).
 */
export const WebSocket = process.env.LOADTEST_WS_CLIENT === 'ws' ? WsWebSocket : LeanWebSocket;

/** Opens one socket per token (Authorization: Bearer; none for a null token), `batch` handshakes at a time. */
export async function openSockets(url, tokens, { batch = 250, onUnexpectedClose } = {}) {
  const sockets = [];
  for (let i = 0; i < tokens.length; i += batch) {
    const opened = await Promise.all(
      tokens.slice(i, i + batch).map(
        (token) =>
          new Promise((resolve, reject) => {
            const ws = new WebSocket(url, { headers: token ? { Authorization: `Bearer ${token}` } : {}, perMessageDeflate: false });
            ws.once('open', () => resolve(ws));
            ws.once('unexpected-response', (_req, res) => reject(new Error(`upgrade refused with HTTP ${res.statusCode}`)));
            ws.once('error', reject);
          }),
      ),
    );
    sockets.push(...opened);
  }
  for (const ws of sockets) {
    ws.on('error', () => {});
    ws.on('close', (code) => onUnexpectedClose?.(ws, code));
  }
  return sockets;
}

/** Closes sockets, waiting at most `timeoutMs` for the close handshakes. */
export async function closeSockets(sockets, timeoutMs = 5000) {
  await Promise.all(
    sockets.map(
      (ws) =>
        new Promise((resolve) => {
          if (ws.readyState === WebSocket.CLOSED) return resolve();
          const timer = setTimeout(() => (ws.terminate(), resolve()), timeoutMs);
          ws.once('close', () => (clearTimeout(timer), resolve()));
          ws.close();
        }),
    ),
  );
}

/**
 * Drives `move` on every socket. `start()` begins; `measure()` starts counting
 * (after a warm-up); `pause()` and `resume()` hold a paced load; `stop()` stops
 * sending, waits up to `drainMs` for the last replies and answers the tallies.
 */
export function moveDriver(sockets, { rate = 4, maxInFlight = 64, gate = 'move', portal = '/game' } = {}) {
  const tally = { sent: 0, replies: 0, errorReplies: 0, errorCodes: {}, mismatched: 0, unexpectedCloses: 0, skipped: 0 };
  let latencies = [];
  let measuring = false;
  /** Latencies and error replies count only for requests sent from here on: a warm-up's backlog is not the measured load's (throughput counts every reply). */
  let measuredFrom = Infinity;
  let running = false;
  let paused = false;
  let ticker;
  const clients = sockets.map((ws, index) => {
    const client = { ws, index, nextId: 1, expectId: 1, sentAt: [], head: 0, open: true };
    ws.on('message', (data) => onReply(client, data));
    ws.on('close', () => {
      if (running && client.open) tally.unexpectedCloses++;
      client.open = false;
    });
    return client;
  });

  function send(client) {
    if (!client.open || client.ws.readyState !== WebSocket.OPEN) return;
    if (client.sentAt.length - client.head >= maxInFlight) {
      tally.skipped++;
      return;
    }
    const id = client.nextId++;
    client.sentAt.push(performance.now());
    client.ws.send(`{"id":${id},"portal":"${portal}","gate":"${gate}","data":{"x":${id % 100},"y":${client.index % 100}}}`);
    if (measuring) tally.sent++;
  }

  function onReply(client, data) {
    const now = performance.now();
    let reply;
    try {
      reply = JSON.parse(data.toString());
    } catch {
      reply = undefined;
    }
    if (reply?.id !== client.expectId) {
      tally.mismatched++;
      return;
    }
    client.expectId++;
    const sentAt = client.sentAt[client.head++];
    if (client.head > 1024 && client.head * 2 > client.sentAt.length) {
      client.sentAt = client.sentAt.slice(client.head);
      client.head = 0;
    }
    if (measuring) tally.replies++;
    if (measuring && sentAt >= measuredFrom) {
      latencies.push(now - sentAt);
      if (reply.ok !== true) {
        tally.errorReplies++;
        const code = reply.error?.code ?? 'unknown';
        tally.errorCodes[code] = (tally.errorCodes[code] ?? 0) + 1;
      }
    }
    if (running && rate === 0) send(client);
  }

  return {
    tally,
    start() {
      running = true;
      if (rate === 0) {
        for (const client of clients) send(client);
        return;
      }
      // Every client sends once per period; clients are spread over 10 ms slots, and
      // the ticker catches up on missed slots so the offered rate holds when the
      // generator's own event loop lags.
      const periodMs = 1000 / rate;
      const slots = Math.max(1, Math.round(periodMs / 10));
      const bySlot = Array.from({ length: slots }, () => []);
      for (const client of clients) bySlot[client.index % slots].push(client);
      const began = performance.now();
      let done = 0;
      ticker = setInterval(() => {
        const due = Math.floor((performance.now() - began) / 10);
        if (paused) done = due + 1;
        for (; done <= due; done++) for (const client of bySlot[done % slots]) send(client);
      }, 10);
    },
    /** Sends nothing until `resume()`; the slots missed meanwhile are skipped, not caught up. */
    pause() {
      paused = true;
    },
    resume() {
      paused = false;
    },
    measure() {
      measuring = true;
      measuredFrom = performance.now();
      latencies = [];
      for (const key of Object.keys(tally)) tally[key] = typeof tally[key] === 'number' ? 0 : {};
    },
    async stop(drainMs = 5000) {
      running = false;
      clearInterval(ticker);
      const windowReplies = tally.replies;
      const deadline = performance.now() + drainMs;
      const outstanding = () => clients.reduce((n, c) => n + (c.open ? c.sentAt.length - c.head : 0), 0);
      while (outstanding() > 0 && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      measuring = false;
      return { ...tally, windowReplies, missing: outstanding(), latencies };
    },
  };
}
