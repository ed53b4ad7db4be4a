import 'reflect-metadata';
import { Gate, JwtShield, Portal, SessionShield, type GateContext } from '@portcullis/core';

@Portal('/game')
export class MacTestPortal {
  @Gate('ping')
  ping(): string {
    return 'pong';
  }

  @SessionShield
  @Gate('move')
  move(data: { x: number; y: number }, _clientId: string, ctx: GateContext): { x: number; y: number; by: string | undefined } {
    return { x: data.x, y: data.y, by: ctx.principal?.id };
  }

  @JwtShield
  @Gate('whoami')
  whoami(_data: unknown, _clientId: string, ctx: GateContext): string | undefined {
    return ctx.principal?.id;
  }

  /** A session gate whose reply is far larger than its request. */
  @SessionShield
  @Gate('inventory')
  inventory(): string {
    return 'x'.repeat(600);
  }
}
