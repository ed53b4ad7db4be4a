import { inject, injectable, type DependencyContainer } from 'tsyringe';
import type { AuthContext, ShieldResult } from '../contracts/auth-context.js';
import { LOGGER_FACTORY, PORTCULLIS_CONFIG, PORTCULLIS_CONTAINER } from '../contracts/injection-tokens.js';
import type { Logger, LoggerFactory } from '../contracts/logger.js';
import type { ShieldFallback } from '../contracts/portcullis-config.js';
import type { Principal } from '../contracts/principal.js';
import { REFUSALS, type EnforceResult } from '../contracts/refusals.js';
import type { ShieldAuth } from '../contracts/shield-auth.js';
import { resolveAtStartup } from '../config/startup-diagnosis.js';
import { describeError } from '../errors/describe-error.js';
import { consoleLoggerFactory } from '../logging/logger.js';
import { ThrottledLog } from '../logging/throttled-log.js';
import { JwtAuth } from './jwt-auth.js';
import { RateLimiter, type CallerKind, type RateLimitAnswer } from './rate-limiter.js';
import { SessionAuth } from './session-auth.js';
import { SessionOrJwtAuth } from './session-or-jwt-auth.js';
import type { PlannedRateLimit, ShieldPlan } from './shield-plan-reader.js';
import type { ShieldClass } from './shield.decorator.js';

const OPEN: Extract<EnforceResult, { ok: true }> = Object.freeze({ ok: true, principal: undefined });

/** The shield each `svc:security:shields:fallback` puts on a gate or route that declares none. */
const FALLBACK_SHIELDS: Readonly<Record<ShieldFallback, ShieldClass | undefined>> = Object.freeze({
  none: undefined,
  jwt: JwtAuth,
  session: SessionAuth,
  any: SessionOrJwtAuth,
});

/**
 * The one place that decides whether a request may pass a {@link ShieldPlan}.
 * Transport-neutral: HTTP and real-time adapters build an `AuthContext` and map
 * the verdict to their own output. Shield classes are resolved through the
 * container once and reused. Fails closed: a shield that throws, or answers
 * something that is not a `ShieldResult`, gives `unavailable` without detail.
 *
 * In order: the plan's shield, or for a plan that declares none and is not
 * `@AllowAnonymous` the `svc:security:shields:fallback` shield; then the roles of
 * every `@Authorize`; then the plan's `@RateLimit`, counted only for requests that
 * got this far (`rate_limited` with `retryAfterMs` over the limit).
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
  private readonly fallback: ShieldClass | undefined;
  private readonly fallbackName: ShieldFallback;
  private readonly announced = new Set<string>();
  private readonly unannounced: string[] = [];
  private limiter: RateLimiter | undefined;
  /** A Redis outage fails every limited request: one line per 10 s, not one per request. */
  private readonly limitFailures: ThrottledLog;
  /** A shield whose keepWarm fails would fail on every shed request: one line per 10 s. */
  private readonly keepWarmFailures: ThrottledLog;
  private readonly unawaitedFailures: ThrottledLog;

  constructor(
    @inject(PORTCULLIS_CONTAINER) private readonly container: DependencyContainer,
    @inject(LOGGER_FACTORY) loggers: LoggerFactory = consoleLoggerFactory,
  ) {
    this.log = loggers.create('portcullis:shield');
    this.limitFailures = new ThrottledLog(this.log, 'error', 'rate-limit counter failed; refusing with unavailable');
    this.keepWarmFailures = new ThrottledLog(this.log, 'warn', 'shield keepWarm failed; ignored');
    this.unawaitedFailures = new ThrottledLog(this.log, 'warn', 'shield peek answered a promise that failed; ignored');
    this.fallbackName = container.isRegistered(PORTCULLIS_CONFIG, true) ? container.resolve(PORTCULLIS_CONFIG).security.shields.fallback : 'none';
    this.fallback = FALLBACK_SHIELDS[this.fallbackName];
  }

  /**
   * Resolves the plan's shield (or the fallback shield) and rate limiter now, so
   * missing dependencies fail at start-up instead of on the first request. With
   * `where` (e.g. `gate /game ping`, `POST /auth/signup`), a plan that answers
   * anonymously is remembered for {@link announceAnonymous}.
   *
   * @throws the container's resolution error.
   */
  prepare(plan: ShieldPlan, where?: string): void {
    const shield = this.shieldOf(plan);
    if (shield) this.shieldFor(shield);
    else if (where !== undefined && !this.announced.has(where)) {
      this.announced.add(where);
      this.unannounced.push(where);
    }
    if (plan.rateLimit) this.rateLimiter();
  }

  /**
   * Logs, in one line, the gates and routes prepared since the last call that
   * answer anonymously (no shield applies to them); each is logged once. The
   * dispatcher and the express mount call it after registering.
   *
   * @example
   * ```ts
   * enforcer.prepare(readShieldPlan(GamePortal, 'ping'), 'gate /game ping');
   * enforcer.announceAnonymous(); // info: answering anonymously { anonymous: ['gate /game ping'], fallback: 'none' }
   * ```
   */
  announceAnonymous(): void {
    if (this.unannounced.length === 0) return;
    const anonymous = this.unannounced.splice(0);
    this.log.info('answering anonymously', { anonymous, fallback: this.fallbackName });
  }

  /**
   * True when {@link decide} answers every request of `plan` at once with an open
   * verdict: no shield, no fallback, no rate limit. An adapter may then skip
   * building the context; the answer is the enforcer's all the same.
   *
   * @example
   * ```ts
   * const verdict = enforcer.isOpen(plan) ? OPEN : enforcer.decide(plan, ctx);
   * ```
   */
  isOpen(plan: ShieldPlan): boolean {
    return this.shieldOf(plan) === undefined && plan.rateLimit === undefined;
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
    return this.decideWith(plan, ctx, true)!;
  }

  /**
   * {@link decide} for a server that is behind: the same verdict when the plan's shield
   * can give it at once ({@link ShieldAuth.peek}); `undefined` when it would wait (for its
   * store), with no verdict and no rate-limit count, the shield left to fill its cache for
   * the credential. A shield without `peek` is not asked (`undefined`). The caller refuses
   * such a request (`overloaded`) rather than queue it behind a read that the busy event
   * loop can only send when its turn ends. Never throws.
   *
   * @example
   * ```ts
   * const verdict = enforcer.decideAtOnce(plan, ctx);
   * if (verdict === undefined) return overloaded(id);
   * ```
   */
  decideAtOnce(plan: ShieldPlan, ctx: AuthContext): EnforceResult | Promise<EnforceResult> | undefined {
    return this.decideWith(plan, ctx, false);
  }

  private decideWith(plan: ShieldPlan, ctx: AuthContext, wait: boolean): EnforceResult | Promise<EnforceResult> | undefined {
    const shieldClass = this.shieldOf(plan);
    if (shieldClass === undefined) return plan.rateLimit ? this.limit(plan.rateLimit, OPEN, ctx) : OPEN;
    try {
      const shield = this.shieldFor(shieldClass);
      const answer = wait ? shield.authenticate(ctx) : shield.peek?.(ctx);
      if (!wait && answer === undefined) return undefined;
      if (typeof (answer as PromiseLike<ShieldResult> | undefined)?.then !== 'function') {
        return this.afterShield(plan, this.judge(plan, shieldClass, answer as ShieldResult), ctx);
      }
      if (!wait) {
        // peek must answer at once; a promise is not a verdict (and its rejection must not go unhandled).
        (answer as PromiseLike<ShieldResult>).then(undefined, (error: unknown) => this.unawaitedFailures.note(() => ({ shield: shieldClass.name, ...describeError(error) })));
        return undefined;
      }
      return Promise.resolve(answer as PromiseLike<ShieldResult>)
        .then((result) => this.afterShield(plan, this.judge(plan, shieldClass, result), ctx))
        .catch((error: unknown) => this.failed(shieldClass, error));
    } catch (error) {
      return this.failed(shieldClass, error);
    }
  }

  /**
   * For a request answered `overloaded` without a decision: lets the plan's shield
   * refresh what it caches for the credential ({@link ShieldAuth.keepWarm}), nothing
   * more: no verdict, no role check, no rate-limit count. Never throws.
   *
   * @example
   * ```ts
   * if (lag.behindMs() > 500) { enforcer.keepWarm(plan, ctx); return overloaded(id); }
   * ```
   */
  keepWarm(plan: ShieldPlan, ctx: AuthContext): void {
    const shieldClass = this.shieldOf(plan);
    if (shieldClass === undefined) return;
    const ignored = (error: unknown) => this.keepWarmFailures.note(() => ({ shield: shieldClass.name, ...describeError(error) }));
    try {
      // Typed void, but an async implementation would hand back a promise that may reject.
      const returned: unknown = this.shieldFor(shieldClass).keepWarm?.(ctx);
      if (typeof (returned as PromiseLike<unknown> | undefined)?.then === 'function') (returned as PromiseLike<unknown>).then(undefined, ignored);
    } catch (error) {
      ignored(error);
    }
  }

  /** The shield that guards `plan`: its own, else the fallback unless it is `@AllowAnonymous`. */
  private shieldOf(plan: ShieldPlan): ShieldClass | undefined {
    return plan.shield ?? (plan.anonymous ? undefined : this.fallback);
  }

  private afterShield(plan: ShieldPlan, verdict: EnforceResult, ctx: AuthContext): EnforceResult | Promise<EnforceResult> {
    return verdict.ok === true && plan.rateLimit ? this.limit(plan.rateLimit, verdict, ctx) : verdict;
  }

  /** Counts the request against the rule; the verdict passes on when within the limit. */
  private limit(rule: PlannedRateLimit, verdict: Extract<EnforceResult, { ok: true }>, ctx: AuthContext): EnforceResult | Promise<EnforceResult> {
    const kind = callerKindOf(rule, verdict.principal);
    let answer: RateLimitAnswer | Promise<RateLimitAnswer>;
    try {
      answer = this.rateLimiter().check(rule, kind, kind === 'p' ? verdict.principal!.id : kind === 'c' ? ctx.clientId : (ctx.remoteAddress ?? ''));
    } catch (error) {
      return this.limitFailed(error);
    }
    if (typeof answer === 'number') return answer === 0 ? verdict : rateLimited(answer);
    return answer.then((wait) => (wait === 0 ? verdict : rateLimited(wait)), (error: unknown) => this.limitFailed(error));
  }

  private rateLimiter(): RateLimiter {
    return (this.limiter ??= this.container.isRegistered(RateLimiter, true) ? this.container.resolve(RateLimiter) : new RateLimiter(undefined));
  }

  private limitFailed(error: unknown): EnforceResult {
    this.limitFailures.note(() => describeError(error));
    return REFUSALS.unavailable;
  }

  /** The verdict on a shield's answer; throws only for an answer too malformed to read (caller fails closed). */
  private judge(plan: ShieldPlan, shieldClass: ShieldClass, result: ShieldResult): EnforceResult {
    if (result?.ok === true) {
      if (typeof result.principal?.id !== 'string' || !Array.isArray(result.principal.roles)) return this.malformed(shieldClass);
      return hasRoles(result.principal, plan.roleSets) ? result : REFUSALS.forbidden;
    }
    if (result?.ok !== false || !Object.hasOwn(REFUSALS, result.code)) return this.malformed(shieldClass);
    // The shield's own message, on the fixed refusal of its code (`unavailable`'s retry hint included).
    return typeof result.message === 'string' && result.message.length > 0
      ? { ...REFUSALS[result.code], message: result.message }
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

/**
 * The counter a request counts against: its principal (`p`), its client address
 * (`a`, also for `principal` when there is no principal) or its connection (`c`).
 */
function callerKindOf(rule: PlannedRateLimit, principal: Principal | undefined): CallerKind {
  if (rule.by === 'connection') return 'c';
  return rule.by === 'principal' && principal !== undefined ? 'p' : 'a';
}

function rateLimited(retryAfterMs: number): EnforceResult {
  return { ok: false, code: 'rate_limited', message: REFUSALS.rate_limited.message, retryAfterMs };
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
