import type { WebSocket } from 'ws';

/**
 * Drops dead peers: every interval each socket that has not shown life since
 * the previous tick (a pong or any message) is terminated, the others are pinged.
 * One timer for all sockets, unref'd so it never keeps a process alive.
 *
 * @example
 * ```ts
 * const heartbeat = new Heartbeat(30_000);
 * heartbeat.add(ws);
 * ws.on('close', () => heartbeat.remove(ws));
 * ```
 */
export class Heartbeat {
  private readonly alive = new Map<WebSocket, boolean>();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly intervalMs: number) {}

  /** Starts watching a socket (no-op when the interval is 0). */
  add(ws: WebSocket): void {
    if (this.intervalMs === 0) return;
    this.alive.set(ws, true);
    ws.on('pong', () => this.seen(ws));
    if (this.timer === undefined) {
      this.timer = setInterval(() => this.tick(), this.intervalMs);
      this.timer.unref();
    }
  }

  /** Records that the peer is alive (a message arrived). */
  seen(ws: WebSocket): void {
    if (this.alive.has(ws)) this.alive.set(ws, true);
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
  }

  private tick(): void {
    for (const [ws, alive] of this.alive) {
      if (!alive) {
        this.alive.delete(ws);
        ws.terminate();
        continue;
      }
      this.alive.set(ws, false);
      try {
        ws.ping();
      } catch {
        ws.terminate();
      }
    }
    if (this.alive.size === 0) this.stop();
  }
}
