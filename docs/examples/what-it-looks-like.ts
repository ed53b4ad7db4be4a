import { Gate, JwtShield, Portal, SessionShield, type GateContext } from '@portcullis/core';
import { Controller, Get, principalId } from '@portcullis/express';
import type { Request } from 'express';

@Controller('/api')
export class ProfileController {
  @JwtShield // a JWT access token in Authorization: Bearer
  @Get('/me')
  me(req: Request) { return { id: principalId(req) }; }
}

@Portal('/game')
export class GamePortal {
  @SessionShield // a session token: one cache lookup per message
  @Gate('move')
  move(data: { x: number; y: number }, _clientId: string, ctx: GateContext) { return { ...data, by: ctx.principal?.id }; }
}
