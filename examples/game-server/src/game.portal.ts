/**
 * The example's real-time portal `/game`, served on WebSocket, TCP and UDP:
 * `ping` is open, `move` needs a session token, `whoami` needs a JWT.
 */
import { Gate, JwtShield, Portal, SessionShield, type GateContext } from '@portcullis/core';

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
  /** Open to anyone: answers `"pong"`. */
  @Gate('ping')
  ping(): string {
    return 'pong';
  }

  /** Session token required: echoes the position with the principal id. */
  @SessionShield
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
