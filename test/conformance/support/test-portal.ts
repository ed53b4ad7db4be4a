/**
 * The portal every transport is tested against: an open gate, a session gate, a
 * JWT gate, a custom shield, a gate that throws, open and session gates with large
 * replies, an echo, and a rate-limited gate.
 */
import 'reflect-metadata';
import { injectable } from 'tsyringe';
import {
  Gate,
  JwtAuth,
  JwtShield,
  Portal,
  RateLimit,
  SessionShield,
  Shield,
  type AuthContext,
  type GateContext,
  type ShieldAuth,
  type ShieldResult,
} from '@portcullis/core';

/** Requests per connection the `limited` gate answers in its (one-hour) window. */
export const LIMITED_PER_CONNECTION = 5;

/** Thrown by the `boom` gate; must never reach a client. */
export const SECRET_DETAIL = 'db password is hunter2';

/** A custom shield: a valid JWT whose `vip` claim is true; other JWTs are forbidden. */
@injectable()
export class VipAuth implements ShieldAuth {
  constructor(private readonly jwt: JwtAuth) {}

  async authenticate(ctx: AuthContext): Promise<ShieldResult> {
    const result = await this.jwt.authenticate(ctx);
    if (!result.ok) return result;
    return result.principal.claims.vip === true ? result : { ok: false, code: 'forbidden', message: 'members only' };
  }
}

@Portal('/game')
export class TestGamePortal {
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

  @Shield(VipAuth)
  @Gate('vip')
  vip(_data: unknown, _clientId: string, ctx: GateContext): string {
    return `welcome ${ctx.principal?.id}`;
  }

  @Gate('boom')
  boom(): never {
    throw new Error(SECRET_DETAIL);
  }

  /** An open gate whose reply is far larger than its request (anti-amplification tests). */
  @Gate('news')
  news(): string {
    return 'x'.repeat(600);
  }

  /** A session gate whose reply is far larger than its request (the sealed UDP reply budget). */
  @SessionShield
  @Gate('inventory')
  inventory(): string {
    return 'x'.repeat(600);
  }

  @Gate('echo')
  echo(data: unknown): unknown {
    return data;
  }

  /** An open gate limited per connection (rate-limit and fuzz tests). */
  @RateLimit({ limit: LIMITED_PER_CONNECTION, windowSeconds: 3600, by: 'connection' })
  @Gate('limited')
  limited(): string {
    return 'within the limit';
  }
}
