/**
 * The per-app pieces every shielded route shares: the enforcer, how refusals are
 * written, how client ids are made, and the logger.
 */
import {
  LOGGER_FACTORY, OverloadedError, PORTCULLIS_CONFIG, PORTCULLIS_CONTAINER, ShieldEnforcer, consoleLoggerFactory, describeError,
  type AuthContext, type Logger, type LoggerFactory,
} from '@portcullis/core';
import { LoadShedder, type EnforceResult, type ShieldPlan } from '@portcullis/core/transport';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { DependencyContainer, InjectionToken } from 'tsyringe';
import { sendPortcullisError } from '../http/error-handler.js';
import { CHALLENGE_WRITER, respondRefusal, type ChallengeWriter, type RefusalFormat } from '../http/refusal-responder.js';
import { authContextFromRequest, connectionClientId, recordPrincipal, requestContext, setContextBuilder } from '../http/request-auth.js';

const passOn: RequestHandler = (_req, _res, next) => next();

/**
 * Options shared by `mountControllers`, `createPortcullisApp` and the plain middleware.
 *
 * @example
 * ```ts
 * mountControllers(app, container, [ApiController], { bodyLimit: '64kb', connectionMemo: false });
 * ```
 */
export interface PortcullisHttpOptions {
  /** Largest JSON body (bytes, or text such as `'64kb'`); default 16 KiB. */
  readonly bodyLimit?: string | number;
  /** Overrides `svc:errors:format`: `simple` for `{error, message}`, `empty` for no body. */
  readonly errorFormat?: 'simple' | 'empty';
  /** Writes refusals instead of the format; else the container's `CHALLENGE_WRITER`, if registered. */
  readonly challengeWriter?: ChallengeWriter;
  /** The client id of a request; default one id per TCP connection (also used when this throws). */
  readonly clientId?: (req: Request) => string;
  /**
   * Keep the shields' memo per keep-alive connection (default true), so a repeated
   * identical JWT skips its signature check until its `exp`; expiry and
   * invalidation are still checked on every request. False: per request.
   */
  readonly connectionMemo?: boolean;
  /**
   * While the event loop is more than this many milliseconds behind, guarded routes (a
   * shield, the fallback shield, or a `@RateLimit`) answer 503 `overloaded` with
   * `Retry-After` at once, their shield not decided and their handler not run (the shield
   * only keeps its cache of the credential warm), so a saturated server spends its time
   * catching up. Default 500; `false` never sheds. Open routes (logins and signups have
   * their own bound) and routes marked `@NeverShed` are never shed; portcullis marks its
   * logout and session routes, since a revocation refused for load keeps alive a session
   * its owner wants ended. The plain middleware takes the option per middleware. This is
   * the HTTP side only; gate calls have `GateDispatcher.shedWhenBehind`.
   */
  readonly shedWhenBehind?: number | false;
}

function optional<T>(container: DependencyContainer, token: InjectionToken<T>): T | undefined {
  return container.isRegistered(token, true) ? container.resolve(token) : undefined;
}

/**
 * Reads the settings of one app from its container and options, once.
 *
 * @example
 * ```ts
 * const runtime = new HttpRuntime(container, { errorFormat: 'simple' });
 * app.get('/me', runtime.shieldMiddleware(readShieldPlan(Api, 'me'))!, handler);
 * ```
 */
export class HttpRuntime {
  readonly enforcer: ShieldEnforcer;
  readonly refusals: RefusalFormat;
  readonly log: Logger;
  readonly bodyLimit: string | number | undefined;
  readonly #clientIdOf: (req: Request) => string;
  readonly #perConnectionMemo: boolean;
  readonly #shedder: LoadShedder;

  /** @throws TypeError when `shedWhenBehind` is neither a positive number nor `false`. */
  constructor(readonly container: DependencyContainer, options: PortcullisHttpOptions = {}) {
    const loggers = optional(container, LOGGER_FACTORY) ?? consoleLoggerFactory;
    const config = optional(container, PORTCULLIS_CONFIG);
    this.log = loggers.create('portcullis:http');
    this.enforcer = optional(container, ShieldEnforcer)
      ?? (container.isRegistered(PORTCULLIS_CONTAINER, true) ? container.resolve(ShieldEnforcer) : new ShieldEnforcer(container, loggers));
    this.refusals = {
      format: options.errorFormat ?? (config?.errors.format === 'simple' ? 'simple' : 'empty'),
      challengeWriter: options.challengeWriter ?? optional(container, CHALLENGE_WRITER),
    };
    this.bodyLimit = options.bodyLimit;
    const clientIdOf = options.clientId;
    // The context is built for every shielded request, so a throwing clientId(req) must not
    // turn each of them into a 500: the request keeps its connection's id, and the bug is logged.
    this.#clientIdOf = clientIdOf
      ? (req) => {
          try {
            return clientIdOf(req);
          } catch (error) {
            this.log.warn('clientId(req) threw; using the connection id', describeError(error));
            return connectionClientId(req);
          }
        }
      : connectionClientId;
    this.#perConnectionMemo = options.connectionMemo ?? true;
    this.#shedder = new LoadShedder(this.log, 'guarded HTTP requests');
    if (options.shedWhenBehind !== undefined) this.#shedder.setLimit(options.shedWhenBehind);
  }

  /**
   * The request's `AuthContext`, built on first use with this app's settings. It is the
   * request's whole auth state: the principal a shield establishes is recorded on it.
   */
  contextOf(req: Request): AuthContext {
    return requestContext(req, this.#buildContext);
  }

  /** Makes {@link authContextOf} build this request's context with this app's settings. */
  bind(req: Request): void {
    setContextBuilder(req, this.#buildContext);
  }

  readonly #buildContext = (req: Request): AuthContext => authContextFromRequest(req, this.#clientIdOf, this.#perConnectionMemo);

  /**
   * Answers 401 to a request that carries several `Authorization` headers, on a route
   * without a shield too: which one the application would read is not for a client to
   * pick. (On a shielded route such a request has no credential and is refused as well.)
   */
  refuseSeveralAuthorizations(req: Request, res: Response, next: NextFunction): void {
    const refusal = { req, res, auth: this.contextOf(req), code: 'unauthorized' as const, message: 'a request may carry one Authorization header' };
    respondRefusal(refusal, this.refusals).catch(next);
  }

  /**
   * Middleware enforcing `plan`: on success the principal is recorded for the
   * caller helpers, on refusal the response is written per the format.
   * Undefined for an open plan, which needs no middleware.
   */
  shieldMiddleware(plan: ShieldPlan, where?: string): RequestHandler | undefined {
    const guard = this.guard(plan, where);
    return guard && ((req, res, next) => guard(req, res, next, passOn));
  }

  /**
   * Like {@link shieldMiddleware}, but calls `proceed` when the request passes, so
   * a route can run its guard and handler as one express layer. `where` (e.g.
   * `POST /auth/signup`) names the route in the start-up list of anonymous routes. A plan
   * marked `@NeverShed` keeps answering while the loop is behind (see `shedWhenBehind`).
   * Undefined when the enforcer answers the plan open without looking at the request.
   */
  guard(plan: ShieldPlan, where?: string): ((req: Request, res: Response, next: NextFunction, proceed: RequestHandler) => void) | undefined {
    this.enforcer.prepare(plan, where);
    if (this.enforcer.isOpen(plan)) return undefined;
    const shedder = plan.neverShed ? undefined : this.#shedder;
    return (req, res, next, proceed) => {
      const ctx = this.contextOf(req);
      if (shedder?.isBehind()) return this.#shed(plan, ctx, res);
      // A shield that could answer at once (a JWT with the in-memory store) lets the
      // handler run in this tick: no promise hop (and no closure) on the hot path.
      const verdict = this.enforcer.decide(plan, ctx);
      if (verdict instanceof Promise) verdict.then((settled) => this.#settle(settled, ctx, req, res, next, proceed), next);
      else this.#settle(verdict, ctx, req, res, next, proceed);
    };
  }

  /** Answers `overloaded` unrun; the shield only keeps its cache of the credential warm, so the end of an overload is no wave of store reads. */
  #shed(plan: ShieldPlan, ctx: AuthContext, res: Response): void {
    this.enforcer.keepWarm(plan, ctx);
    sendPortcullisError(res, new OverloadedError('requests', this.#shedder.refused() / 1000));
  }

  /** Runs `proceed` for a request that passed, or writes the refusal. */
  #settle(verdict: EnforceResult, ctx: AuthContext, req: Request, res: Response, next: NextFunction, proceed: RequestHandler): void {
    if (!verdict.ok) {
      respondRefusal({ req, res, auth: ctx, code: verdict.code, message: verdict.message, retryAfterMs: verdict.retryAfterMs }, this.refusals).catch(next);
      return;
    }
    recordPrincipal(ctx, verdict.principal);
    try {
      proceed(req, res, next);
    } catch (error) {
      next(error);
    }
  }
}
