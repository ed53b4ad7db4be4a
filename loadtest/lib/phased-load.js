/**
 * An open-loop WebSocket `move` generator whose total rate changes by phase, for
 * the overload test: `phase(name, rate)` starts a phase at `rate` requests per
 * second over all sockets (round-robin, in 10 ms ticks, catching up on missed ticks
 * by at most 50 ms of requests per tick, so a generator that falls behind still
 * reads its replies every few ticks), and every request is counted in the phase it
 * was sent in. Replies on one socket come in request order, so a FIFO of send times
 * per socket gives each reply's latency. A socket never has more than `maxInFlight`
 * requests outstanding; a request due on a full socket is not sent and is counted
 * as `skipped`. Every request goes to the sockets it was given (127.0.0.1 in the
 * load tests); the caller bounds the run by the phases' durations.
 */
import { performance } from 'node:perf_hooks';
import { WebSocket } from './ws-load.js';

const TICK_MS = 10;
/** The most one tick sends, in ms of the phase's rate: a catch-up of a whole second took the generator's loop a second and more, and every reply waiting meanwhile read as that much later. */
const MAX_BURST_MS = 50;

function newPhase(name, rate, startedAt) {
  return {
    name, rate, startedAt, endedAt: undefined,
    attempted: 0, skipped: 0, sent: 0, replies: 0, refusals: {}, answeredWithin1s: 0,
    latencies: [], sentOffsets: [], unanswered: [], mismatched: 0, closes: {},
  };
}

/**
 * @example
 * const driver = phasedDriver(sockets);
 * driver.phase('overload', 60_000);
 * await sleep(10_000);
 * driver.phase('recovery', 15_000);
 * await sleep(20_000);
 * const phases = await driver.stop();
 */
export function phasedDriver(sockets, { maxInFlight = 64, portal = '/game', gate = 'move' } = {}) {
  const phases = [];
  let current;
  let running = true;
  let ticker;
  let cursor = 0;
  const clients = sockets.map((ws, index) => {
    const client = { ws, index, nextId: 1, expectId: 1, sentAt: [], phaseOf: [], head: 0, open: true };
    ws.on('message', (data) => onReply(client, data));
    ws.on('close', (code) => {
      if (running && client.open) current.closes[code] = (current.closes[code] ?? 0) + 1;
      client.open = false;
    });
    return client;
  });

  function sendOne() {
    const phase = current;
    phase.attempted++;
    for (let tries = 0; tries < clients.length; tries++) {
      const client = clients[cursor];
      cursor = (cursor + 1) % clients.length;
      if (!client.open || client.ws.readyState !== WebSocket.OPEN) continue;
      if (client.sentAt.length - client.head >= maxInFlight) {
        phase.skipped++;
        return;
      }
      const id = client.nextId++;
      client.sentAt.push(performance.now());
      client.phaseOf.push(phase);
      client.ws.send(`{"id":${id},"portal":"${portal}","gate":"${gate}","data":{"x":${id % 100},"y":${client.index % 100}}}`);
      phase.sent++;
      return;
    }
    phase.skipped++;
  }

  function onReply(client, data) {
    if (!running) return;
    const now = performance.now();
    let reply;
    try {
      reply = JSON.parse(data.toString());
    } catch {
      reply = undefined;
    }
    if (reply?.id !== client.expectId) {
      current.mismatched++;
      return;
    }
    client.expectId++;
    const sentAt = client.sentAt[client.head];
    const phase = client.phaseOf[client.head];
    client.head++;
    if (client.head > 1024 && client.head * 2 > client.sentAt.length) {
      client.sentAt = client.sentAt.slice(client.head);
      client.phaseOf = client.phaseOf.slice(client.head);
      client.head = 0;
    }
    const latency = now - sentAt;
    phase.replies++;
    phase.latencies.push(latency);
    phase.sentOffsets.push(sentAt - phase.startedAt);
    if (latency <= 1000) phase.answeredWithin1s++;
    if (reply.ok !== true) {
      const code = reply.error?.code ?? 'unknown';
      phase.refusals[code] = (phase.refusals[code] ?? 0) + 1;
    }
  }

  return {
    /** Ends the current phase (if any) and starts `name` at `rate` requests per second in total. */
    phase(name, rate) {
      const now = performance.now();
      if (current) current.endedAt = now;
      current = newPhase(name, rate, now);
      phases.push(current);
      clearInterval(ticker);
      const phase = current;
      ticker = setInterval(() => {
        const due = Math.floor(((performance.now() - phase.startedAt) * phase.rate) / 1000);
        const count = Math.min(due - phase.attempted, Math.ceil((phase.rate * MAX_BURST_MS) / 1000));
        for (let i = 0; i < count; i++) sendOne();
      }, TICK_MS);
    },
    /**
     * Stops sending, waits up to `drainMs` for outstanding replies, and answers the
     * phases; requests still unanswered are listed per phase (`unanswered`: send offsets).
     */
    async stop(drainMs = 5000) {
      clearInterval(ticker);
      const stoppedAt = performance.now();
      if (current) current.endedAt = stoppedAt;
      const outstanding = () => clients.reduce((n, c) => n + (c.open ? c.sentAt.length - c.head : 0), 0);
      while (outstanding() > 0 && performance.now() - stoppedAt < drainMs) await new Promise((resolve) => setTimeout(resolve, 20));
      running = false;
      for (const client of clients) {
        for (let i = client.head; i < client.sentAt.length; i++) client.phaseOf[i].unanswered.push(client.sentAt[i] - client.phaseOf[i].startedAt);
      }
      return phases;
    },
  };
}
