/**
 * Revoked players under load, for the overload test: a sample of authenticated WebSocket
 * players, each sending `move` at its own modest pace, who are logged out one by one
 * (`POST /auth/logout` with their session token) while the server is overloaded. What a
 * player must see from the moment the logout answered 204:
 * - no reply `ok: true` to a request sent after that moment (a violation);
 * - its socket closed with 4401, soon;
 * - a new connection with the revoked token refused (accepted: a violation).
 * A reply `ok: true` that arrives after the 204 to a request sent before it was in flight
 * when the logout ran (the server may have answered it before revoking): counted apart,
 * not a violation. Every wait is bounded (`finish(graceMs)`); traffic goes to the URLs given.
 */
import { performance } from 'node:perf_hooks';
import WebSocket from 'ws';
import { postJson } from './http-client.js';
import { latencySummary } from './stats.js';

const CLOSE_REVOKED = 4401;
const RECONNECT_TIMEOUT_MS = 5000;

/** Opens a socket with `token`; answers 'accepted', 'refused <status>' or 'no answer' (closing what opened). */
function tryReconnect(wsUrl, token) {
  return new Promise((resolve) => {
    const ws = new WebSocket(wsUrl, { headers: { Authorization: `Bearer ${token}` }, perMessageDeflate: false });
    const done = (outcome) => {
      clearTimeout(timer);
      ws.removeAllListeners('open');
      ws.on('error', () => {});
      ws.terminate();
      resolve(outcome);
    };
    const timer = setTimeout(() => done('no answer'), RECONNECT_TIMEOUT_MS);
    ws.once('open', () => done('accepted'));
    ws.once('unexpected-response', (_req, res) => done(`refused ${res.statusCode}`));
    ws.once('error', (error) => done(`error ${error.code ?? error.message}`));
  });
}

/**
 * @param {{ http: string, wsUrl: string, players: { ws: WebSocket, token: string }[], rate?: number }} options
 *   `rate`: `move` requests per second per player (the example's limit is 20 per connection).
 * @example
 * const probe = revocationProbe({ http, wsUrl, players });
 * probe.start();
 * probe.revokeOver(70, 10_000); // 70 logouts spread over the next 10 s
 * const result = await probe.finish();
 */
export function revocationProbe({ http, wsUrl, players, rate = 10 }) {
  const states = players.map(({ ws, token }, index) => ({
    ws, token, index, nextId: 1, sentAt: new Map(),
    logoutSentAt: undefined, loggedOutAt: undefined, logoutStatus: undefined,
    closeCode: undefined, closedAt: undefined, reconnect: undefined, reconnectDone: undefined,
  }));
  const tally = { violations: 0, okInFlight: 0, refusedAfterLogout: {}, closedWithoutLogout: 0 };
  const pending = [];
  const timers = [];
  let ticker;
  let next = 0;

  for (const state of states) {
    state.ws.on('message', (data) => onReply(state, data));
    state.ws.on('close', (code) => {
      state.closeCode = code;
      state.closedAt = performance.now();
      if (state.logoutSentAt === undefined) tally.closedWithoutLogout++;
      else state.reconnectDone = tryReconnect(wsUrl, state.token).then((outcome) => (state.reconnect = outcome));
    });
  }

  function onReply(state, data) {
    let reply;
    try {
      reply = JSON.parse(data.toString());
    } catch {
      return;
    }
    const sentAt = state.sentAt.get(reply?.id);
    state.sentAt.delete(reply?.id);
    if (state.loggedOutAt === undefined || sentAt === undefined) return;
    if (reply.ok === true) {
      if (sentAt > state.loggedOutAt) tally.violations++;
      else tally.okInFlight++;
    } else {
      const code = reply.error?.code ?? 'unknown';
      tally.refusedAfterLogout[code] = (tally.refusedAfterLogout[code] ?? 0) + 1;
    }
  }

  function send(state) {
    if (state.ws.readyState !== WebSocket.OPEN) return;
    const id = state.nextId++;
    state.sentAt.set(id, performance.now());
    state.ws.send(`{"id":${id},"portal":"/game","gate":"move","data":{"x":${id % 100},"y":${state.index % 100}}}`);
  }

  async function logout(state) {
    state.logoutSentAt = performance.now();
    try {
      const answer = await postJson(`${http}/auth/logout`, undefined, state.token);
      state.logoutStatus = answer.status;
    } catch (error) {
      state.logoutStatus = `threw ${error?.message}`;
    }
    // Only a 204 revoked the session: after any other answer its replies are no violation (the failed logout is counted on its own).
    if (state.logoutStatus === 204) state.loggedOutAt = performance.now();
  }

  return {
    /** Starts every player sending `move` at `rate` per second. */
    start() {
      const periodMs = 1000 / rate;
      let slot = 0;
      const slots = Math.max(1, Math.round(periodMs / 10));
      ticker = setInterval(() => {
        for (const state of states) if (state.index % slots === slot) send(state);
        slot = (slot + 1) % slots;
      }, 10);
    },
    /** Logs out the next `count` players, spread evenly over the next `spanMs`; answers at once. */
    revokeOver(count, spanMs) {
      const chosen = states.slice(next, next + count);
      next += chosen.length;
      chosen.forEach((state, i) => {
        timers.push(setTimeout(() => pending.push(logout(state)), (i * spanMs) / Math.max(1, chosen.length)));
      });
    },
    /**
     * Waits for the logouts begun, then up to `graceMs` for the revoked sockets to close and
     * their reconnects to be answered; stops sending and answers the tallies.
     */
    async finish(graceMs = 5000) {
      for (const timer of timers) clearTimeout(timer);
      await Promise.all(pending);
      const revoked = states.filter((s) => s.loggedOutAt !== undefined);
      const deadline = performance.now() + graceMs;
      while (revoked.some((s) => s.closedAt === undefined) && performance.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      clearInterval(ticker);
      await Promise.all(revoked.map((s) => s.reconnectDone));
      const closed = revoked.filter((s) => s.closeCode === CLOSE_REVOKED);
      const closeMs = closed.map((s) => Math.max(0, s.closedAt - s.loggedOutAt));
      const reconnects = {};
      for (const s of revoked) {
        const outcome = s.reconnect ?? 'not tried (socket still open)';
        reconnects[outcome] = (reconnects[outcome] ?? 0) + 1;
      }
      const otherCloses = {};
      for (const s of revoked) if (s.closeCode !== undefined && s.closeCode !== CLOSE_REVOKED) otherCloses[s.closeCode] = (otherCloses[s.closeCode] ?? 0) + 1;
      const summary = latencySummary(closeMs);
      return {
        players: states.length,
        revoked: revoked.length,
        logoutsFailed: states.filter((s) => s.logoutSentAt !== undefined && s.logoutStatus !== 204).length,
        closed4401: closed.length,
        closedBeforeLogoutAnswer: closed.filter((s) => s.closedAt < s.loggedOutAt).length,
        closeAfterLogoutMs: { p50: summary.p50, p99: summary.p99, max: summary.max },
        notClosed: revoked.filter((s) => s.closedAt === undefined).length,
        otherCloses,
        violations: tally.violations + (reconnects.accepted ?? 0),
        okRepliesAfterLogout: tally.violations,
        okInFlight: tally.okInFlight,
        refusedAfterLogout: tally.refusedAfterLogout,
        reconnects,
        closedWithoutLogout: tally.closedWithoutLogout,
        graceMs,
      };
    },
  };
}
