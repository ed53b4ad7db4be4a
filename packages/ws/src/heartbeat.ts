import type { WebSocket } from 'ws';

/**
 * Slices one interval is cut into. Pinging every socket in one tick blocks the event
 * loop for as long as those writes take (about 120 ms for 5,000 sockets in the load
 * test), so each tick checks only its share and a round still takes one interval.
 */
const SLICES = 10;

/**
 * A watched socket's sign of life since the heartbeat last checked it. The connection
 * sets `alive` on every message: a field of the connection object itself (see
 * {@link Heartbeat.add}), so the busiest path costs no Map look-up and reads no other object.
 */
export interface Liveness {
  alive: boolean;
}

/**
 * Drops dead peers: every interval each socket that has not shown life since it
 * was last checked (a pong or any message) is terminated, the others are pinged.
 * The sockets are checked a slice at a time over the interval, on one timer for
 * all sockets, unref'd so it never keeps a process alive.
 *
 * @example
 * ```ts
 * const heartbeat = new Heartbeat(30_000);
 * const liveness = heartbeat.add(ws);
 * ws.on('message', () => (liveness.alive = true));
 * ws.on('close', () => heartbeat.remove(ws));
 * ```
 */
export class Heartbeat {
  private readonly alive = new Map<WebSocket, Liveness>();
  private timer: NodeJS.Timeout | undefined;
  private round: IterableIterator<[WebSocket, Liveness]> | undefined;
  private perTick = 1;
  private ticks = 0;

  constructor(private readonly intervalMs: number) {}

  /**
   * Starts watching a socket (not when the interval is 0); answers the record whose
   * `alive` the caller sets when a message arrives (`liveness`, when given: the caller's
   * own object). A pong sets it too.
   */
  add(ws: WebSocket, liveness: Liveness = { alive: true }): Liveness {
    liveness.alive = true;
    if (this.intervalMs === 0) return liveness;
    this.alive.set(ws, liveness);
    ws.on('pong', () => {
      liveness.alive = true;
    });
    if (this.timer === undefined) {
      this.timer = setInterval(() => this.tick(), Math.max(1, Math.floor(this.intervalMs / SLICES)));
      this.timer.unref();
    }
    return liveness;
  }

  /** Stops watching a socket. */
  remove(ws: WebSocket): void {
    this.alive.delete(ws);
    if (this.alive.size === 0) this.stop();
  }

  /** Stops the timer and forgets every socket. */
  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    this.round = undefined;
    this.ticks = 0;
  }

  private tick(): void {
    // A round starts every SLICES ticks, so each socket is checked once per interval
    // however few sockets there are (a round that ends early idles until then).
    if (this.ticks++ % SLICES === 0) {
      this.round = this.alive.entries();
      this.perTick = Math.max(1, Math.ceil(this.alive.size / SLICES));
    }
    if (this.round === undefined) return;
    for (let i = 0; i < this.perTick; i++) {
      const next = this.round.next();
      if (next.done) {
        this.round = undefined;
        break;
      }
      const [ws, liveness] = next.value;
      if (!liveness.alive) {
        this.alive.delete(ws);
        ws.terminate();
        continue;
      }
      liveness.alive = false;
      try {
        ws.ping();
      } catch {
        ws.terminate();
      }
    }
    if (this.alive.size === 0) this.stop();
  }
}
