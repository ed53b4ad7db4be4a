/**
 * The example's real-time portal `/game`, served on WebSocket, TCP and UDP:
 * `ping` is open to anyone, `time` declares nothing (so `shields:fallback`
 * decides), `move` needs a session token and is limited to 20 per second per
 * connection, `whoami` needs a JWT.
 */
import { AllowAnonymous, Gate, JwtShield, Portal, RateLimit, SessionShield, type GateContext } from '@portcullis/core';

/** A `move` request's data. */
export interface MoveData {
  readonly x: number;
  readonly y: number;
}

/**
 * The example's `/game` portal.
 *
 * @example
 * ```ts
 * container.resolve(GateDispatcher).register(GamePortal);
 * // {"id":1,"portal":"/game","gate":"ping"} → {"id":1,"ok":true,"data":"pong"}
 * ```
 */
@Portal('/game')
export class GamePortal {
  /** Open to anyone, whatever the fallback: answers `"pong"`. */
  @AllowAnonymous
  @Gate('ping')
  ping(): string {
    return 'pong';
  }

  /**
   * No decorator at all: open with `svc:security:shields:fallback = none` (the
   * default), guarded by the fallback shield otherwise. Answers the server's clock.
   */
  @Gate('time')
  time(): { now: number } {
    return { now: Date.now() };
  }

  /**
   * Session token required, 20 per second per connection: echoes the position with the
   * principal id. Counted per connection, the hottest gate never waits on Redis in a fleet
   * (a connection lives on one server); `by: 'principal'` would share the count across
   * the fleet at the price of a Redis call per player and window.
   */
  @SessionShield
  @RateLimit({ limit: 20, windowSeconds: 1, by: 'connection' })
  @Gate('move')
  move(data: MoveData, _clientId: string, ctx: GateContext): { x: number; y: number; by: string | undefined } {
    const { x, y } = (data ?? {}) as Partial<MoveData>;
    return { x: Number(x), y: Number(y), by: ctx.principal?.id };
  }

  /** JWT required (on this gate only): answers the principal id. */
  @JwtShield
  @Gate('whoami')
  whoami(_data: unknown, _clientId: string, ctx: GateContext): string | undefined {
    return ctx.principal?.id;
  }
}
