import { inject, injectable, type DependencyContainer } from 'tsyringe';
import type { AuthContext, ShieldResult } from '../contracts/auth-context.js';
import { LOGGER_FACTORY, PORTCULLIS_CONTAINER } from '../contracts/injection-tokens.js';
import type { Logger, LoggerFactory } from '../contracts/logger.js';
import type { Principal } from '../contracts/principal.js';
import { REFUSALS, type EnforceResult } from '../contracts/refusals.js';
import type { ShieldAuth } from '../contracts/shield-auth.js';
import { resolveAtStartup } from '../config/startup-diagnosis.js';
import { describeError } from '../errors/describe-error.js';
import { consoleLoggerFactory } from '../logging/logger.js';
import type { ShieldPlan } from './shield-plan-reader.js';
import type { ShieldClass } from './shield.decorator.js';

const OPEN: EnforceResult = Object.freeze({ ok: true, principal: undefined });

/**
 * The one place that decides whether a request may pass a {@link ShieldPlan}.
 * Transport-neutral: HTTP and real-time adapters build an `AuthContext` and map
 * the verdict to their own output. Shield classes are resolved through the
 * container once and reused. Fails closed: a shield that throws, or answers
 * something that is not a `ShieldResult`, gives `unavailable` without detail.
 *
 * @example
 * ```ts
 * const enforcer = new ShieldEnforcer(container);
 * const verdict = await enforcer.enforce(readShieldPlan(GamePortal, 'move'), ctx);
 * if (!verdict.ok) return reply(verdict.code);
 * ```
 */
@injectable()
export class ShieldEnforcer {
  private readonly shields = new Map<ShieldClass, ShieldAuth>();
  private readonly log: Logger;

  constructor(
    @inject(PORTCULLIS_CONTAINER) private readonly container: DependencyContainer,
    @inject(LOGGER_FACTORY) loggers: LoggerFactory = consoleLoggerFactory,
  ) {
    this.log = loggers.create('portcullis:shield');
  }

  /**
   * Resolves the plan's shield now, so a shield whose dependencies are missing
   * fails at start-up instead of on the first request.
   *
   * @throws the container's resolution error.
   */
  prepare(plan: ShieldPlan): void {
    if (plan.shield) this.shieldFor(plan.shield);
  }

  /** Runs the plan's shield and role checks for one request. Never throws. */
  async enforce(plan: ShieldPlan, ctx: AuthContext): Promise<EnforceResult> {
    return this.decide(plan, ctx);
  }

  /**
   * {@link enforce}, answered at once (not a promise) when the shield answered at
   * once: an adapter then runs the handler in the same tick, which saves the
   * promise hops on every request. Never throws and never rejects.
   *
   * @example
   * ```ts
   * const verdict = enforcer.decide(plan, ctx);
   * if (isPromise(verdict)) verdict.then(settle); else settle(verdict);
   * ```
   */
  decide(plan: ShieldPlan, ctx: AuthContext): EnforceResult | Promise<EnforceResult> {
    const shieldClass = plan.shield;
    if (shieldClass === undefined) return OPEN;
    try {
      const answer = this.shieldFor(shieldClass).authenticate(ctx);
      if (typeof (answer as PromiseLike<ShieldResult> | undefined)?.then !== 'function') return this.judge(plan, shieldClass, answer as ShieldResult);
      return Promise.resolve(answer).then((result) => this.judge(plan, shieldClass, result)).catch((error: unknown) => this.failed(shieldClass, error));
    } catch (error) {
      return this.failed(shieldClass, error);
    }
  }

  /** The verdict on a shield's answer; throws only for an answer too malformed to read (caller fails closed). */
  private judge(plan: ShieldPlan, shieldClass: ShieldClass, result: ShieldResult): EnforceResult {
    if (result?.ok === true) {
      if (typeof result.principal?.id !== 'string' || !Array.isArray(result.principal.roles)) return this.malformed(shieldClass);
      return hasRoles(result.principal, plan.roleSets) ? result : REFUSALS.forbidden;
    }
    if (result?.ok !== false || !Object.hasOwn(REFUSALS, result.code)) return this.malformed(shieldClass);
    return typeof result.message === 'string' && result.message.length > 0
      ? { ok: false, code: result.code, message: result.message }
      : REFUSALS[result.code];
  }

  private shieldFor(shieldClass: ShieldClass): ShieldAuth {
    let shield = this.shields.get(shieldClass);
    if (!shield) {
      shield = resolveAtStartup(this.container, shieldClass);
      this.shields.set(shieldClass, shield);
    }
    return shield;
  }

  private malformed(shieldClass: ShieldClass): EnforceResult {
    this.log.error('shield answered something that is not a ShieldResult; refusing', { shield: shieldClass.name });
    return REFUSALS.unavailable;
  }

  private failed(shieldClass: ShieldClass, error: unknown): EnforceResult {
    this.log.error('shield failed; refusing with unavailable', { shield: shieldClass.name, ...describeError(error) });
    return REFUSALS.unavailable;
  }
}

function hasRoles(principal: Principal, roleSets: readonly (readonly string[])[]): boolean {
  for (let i = 0; i < roleSets.length; i++) {
    const anyOf = roleSets[i]!;
    let held = false;
    for (let j = 0; j < anyOf.length && !held; j++) held = principal.roles.includes(anyOf[j]!);
    if (!held) return false;
  }
  return true;
}
