import { errorReply, isWireErrorCode, parseJsonFrame, type GateReply, type RefreshReply, type WireErrorCode } from '@portcullis/protocol';
import { inject, injectable, type DependencyContainer } from 'tsyringe';
import { LOGGER_FACTORY, PORTCULLIS_CONTAINER } from '../contracts/injection-tokens.js';
import type { Logger, LoggerFactory } from '../contracts/logger.js';
import type { EnforceResult } from '../contracts/refusals.js';
import { resolveAtStartup } from '../config/startup-diagnosis.js';
import { describeError } from '../errors/describe-error.js';
import { PortcullisError, retryAfterMsOf } from '../errors/portcullis-error.js';
import { consoleLoggerFactory } from '../logging/logger.js';
import { ShieldEnforcer } from '../shield/shield-enforcer.js';
import type { ShieldPlan } from '../shield/shield-plan-reader.js';
import type { AuthContext } from '../contracts/auth-context.js';
import { REFUSALS } from '../contracts/refusals.js';
import type { ConnectionContext, GateContext, GateHandler } from './connection-context.js';
import { CONNECTION_PLAN, type Admission } from './connection-plan.js';
import { LoadShedder } from '../runtime/load-shedder.js';
import { refreshInBand, type InBandOutcome } from './in-band-credentials.js';
import { readPortalPlan } from './portal-reader.js';
import { TokenSessionSync } from '../session/token-session-sync.js';

/**
 * A class decorated with `@Portal`; resolved through the container.
 *
 * @example
 * ```ts
 * const portals: PortalClass[] = [GamePortal, ChatPortal];
 * dispatcher.register(...portals);
 * ```
 */
export type PortalClass = new (...args: any[]) => object;

interface CompiledGate {
  readonly plan: ShieldPlan;
  /** The enforcer answers every request open at once: no shield, fallback or rate limit. */
  readonly open: boolean;
  readonly handler: GateHandler;
}

type MutableGateContext = { -readonly [K in keyof GateContext]: GateContext[K] };

const OPEN: EnforceResult = Object.freeze({ ok: true, principal: undefined });

/**
 * The transport-neutral heart of the real-time protocol: routes a request
 * `{id, portal, gate, data}` to its gate, enforces the gate's shield plan, calls
 * the handler and turns every outcome into a reply frame (the real-time
 * contract of docs/protocol.md, plus `unavailable` when the session store is down). Transports only
 * move bytes: they hand a parsed object or the JSON text in, and send the reply out.
 *
 * @example
 * ```ts
 * container.register(PORTCULLIS_CONTAINER, { useValue: container });
 * const dispatcher = container.resolve(GateDispatcher).register(GamePortal);
 * socket.on('message', async (text) => socket.send(encodeReply(await dispatcher.dispatchText(text, conn))));
 * ```
 */
@injectable()
export class GateDispatcher {
  private readonly portals = new Map<string, Map<string, CompiledGate>>();
  private readonly log: Logger;
  private readonly shedder: LoadShedder;
  /**
   * Resolved on the first refresh frame, not at construction: a dispatcher builds where
   * no session services are registered, and `register` names the missing setting.
   */
  private sessions: TokenSessionSync | undefined;

  constructor(
    @inject(PORTCULLIS_CONTAINER) private readonly container: DependencyContainer,
    private readonly enforcer: ShieldEnforcer,
    @inject(LOGGER_FACTORY) loggers: LoggerFactory = consoleLoggerFactory,
  ) {
    this.log = loggers.create('portcullis:realtime');
    this.shedder = new LoadShedder(this.log, 'gate calls');
  }

  /**
   * Registers portal classes: reads their plans, resolves an instance of each
   * through the container and every shield they use, so mistakes fail here. The
   * gates that answer anonymously are logged once, in one line.
   *
   * @throws TypeError for a class without `@Portal` or gates, or a portal path registered twice;
   *   the container's error when a portal or shield cannot be resolved.
   */
  register(...portalClasses: PortalClass[]): this {
    for (const portalClass of portalClasses) {
      const { path, gates } = readPortalPlan(portalClass);
      if (this.portals.has(path)) throw new TypeError(`portal ${path} is registered twice (${portalClass.name})`);
      const instance = resolveAtStartup(this.container, portalClass) as Record<string | symbol, unknown>;
      const compiled = new Map<string, CompiledGate>();
      for (const { name, method, plan } of gates) {
        const handler = instance[method];
        if (typeof handler !== 'function') throw new TypeError(`${portalClass.name}.${String(method)} is not a method`);
        this.enforcer.prepare(plan, `gate ${path} ${name}`);
        compiled.set(name, { plan, open: this.enforcer.isOpen(plan), handler: handler.bind(instance) as GateHandler });
      }
      this.portals.set(path, compiled);
    }
    this.enforcer.announceAnonymous();
    return this;
  }

  /**
   * Sets when gate calls are shed. While the event loop is more than `lagMs` behind:
   * - a request that may have waited that long is answered `overloaded` (with
   *   `retryAfterMs`) at once, its shield not decided and its handler not run: the shield
   *   only keeps its cache of the credential warm (`ShieldAuth.keepWarm`). So a saturated
   *   server spends its time catching up instead of on work whose caller has waited too
   *   long already;
   * - a request its connection read soon after the read before (see `dispatch`'s
   *   `waitedMs`) has not waited through that lag, and is answered when its shield can
   *   answer at once (from its caches). One whose shield would wait for the store is
   *   answered `overloaded` instead (`ShieldEnforcer.decideAtOnce`), so no credential check
   *   joins a store queue that the busy loop sends only when its turn ends (a fleet-wide
   *   `@RateLimit`'s claim of its window and an async handler still may).
   *
   * The lag is how late the loop's timers run. A server that has just kept up with
   * thousands of sockets can run its timers seconds late while each socket is read
   * within a fraction of a second (libuv reads up to 48 batches of 1,024 ready sockets
   * before it runs a timer): the second rule keeps it answering then. Gates marked
   * `@NeverShed` are never shed (put it on gates that revoke). `false` never sheds.
   * Default 500 ms. HTTP routes have a setting of their own (the express options'
   * `shedWhenBehind`).
   *
   * @example
   * ```ts
   * container.resolve(GateDispatcher).register(GamePortal).shedWhenBehind(250);
   * ```
   */
  shedWhenBehind(lagMs: number | false): this {
    this.shedder.setLimit(lagMs);
    return this;
  }

  /**
   * Answers one parsed request. Never throws (a returned promise never rejects). The
   * reply comes back at once, without a promise, when the shield and the handler answered
   * synchronously (a near-cache hit, an in-memory store, a plain handler): most messages
   * of a live game then cost no promise and no extra microtask.
   *
   * `waitedMs` is the longest the request can have waited before it was read: for a
   * connection, the time since its last read that took everything the socket held
   * (`ConnectionProtocol.noteRead` keeps it).
   * Left out, it is unknown, and while the loop is behind the request is shed (see
   * {@link shedWhenBehind}).
   *
   * @example
   * ```ts
   * const reply = await dispatcher.dispatch({ id: 1, portal: '/game', gate: 'move', data: { x: 1 } }, conn);
   * ```
   */
  dispatch(raw: unknown, conn: ConnectionContext, waitedMs = Number.POSITIVE_INFINITY): GateReply | Promise<GateReply> {
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return errorReply(null, 'bad_request');
    const frame = raw as Record<string, unknown>;
    const id = frame.id;
    if (typeof id !== 'number' || !Number.isFinite(id)) return errorReply(null, 'bad_request');
    const { portal, gate } = frame;
    if (typeof portal !== 'string' || typeof gate !== 'string') return errorReply(id, 'bad_request');
    const route = this.portals.get(portal)?.get(gate);
    if (route === undefined) return errorReply(id, 'not_found');
    const ctx: MutableGateContext = {
      transport: conn.transport,
      credential: conn.tokenInFrame ? (typeof frame.token === 'string' ? frame.token : undefined) : conn.credential,
      sessionId: conn.sessionId,
      clientId: conn.clientId,
      remoteAddress: conn.remoteAddress,
      portal,
      gate,
      memo: conn.memo,
      principal: undefined,
    };
    let decided: EnforceResult | Promise<EnforceResult> | undefined;
    try {
      if (route.plan.neverShed || !this.shedder.isBehind()) decided = route.open ? OPEN : this.enforcer.decide(route.plan, ctx);
      else {
        // Behind: a request that may have waited that long is refused unrun; one read soon
        // after it was sent is answered if its shield can answer now, and refused if the
        // shield would wait for the store (which the busy loop sends only when its turn ends).
        if (waitedMs > this.shedder.limitMs) return this.shed(id, route, ctx);
        decided = route.open ? OPEN : this.enforcer.decideAtOnce(route.plan, ctx);
        if (decided === undefined) return this.overloaded(id);
      }
    } catch (error) {
      return this.failed(id, ctx, conn, error);
    }
    if (decided instanceof Promise) {
      return decided.then(
        (verdict) => this.answer(route, frame, id, verdict, ctx, conn),
        (error: unknown) => this.failed(id, ctx, conn, error),
      );
    }
    return this.answer(route, frame, id, decided, ctx, conn);
  }

  /** Runs the handler once the shield let the request through; a handler's promise is awaited. */
  private answer(route: CompiledGate, frame: Record<string, unknown>, id: number, verdict: EnforceResult, ctx: MutableGateContext, conn: ConnectionContext): GateReply | Promise<GateReply> {
    if (!verdict.ok) return errorReply(id, verdict.code, verdict.message, verdict.retryAfterMs);
    ctx.principal = verdict.principal;
    let result: unknown;
    try {
      result = route.handler(frame.data, conn.clientId, ctx);
    } catch (error) {
      return this.failed(id, ctx, conn, error);
    }
    if (!isThenable(result)) return { id, ok: true, data: result === undefined ? null : result };
    return Promise.resolve(result).then(
      (data) => ({ id, ok: true, data: data === undefined ? null : data }),
      (error: unknown) => this.failed(id, ctx, conn, error),
    );
  }

  /** A handler (or, failing closed, a shield) threw: its real-time code, or `internal` logged. */
  private failed(id: number, ctx: GateContext, conn: ConnectionContext, error: unknown): GateReply {
    const code = replyCodeOf(error);
    const fields = { portal: ctx.portal, gate: ctx.gate, clientId: conn.clientId, ...describeError(error) };
    if (code === 'internal') this.log.error('gate handler threw; answering internal', fields);
    else this.log.debug(`gate handler refused with ${code}`, fields);
    // A refusal the handler chose says when to try again, if it does (every `unavailable` does).
    return errorReply(id, code, undefined, retryAfterMsOf(error, code));
  }

  /** Answers `overloaded` unrun; the shield only keeps its cache of the credential warm, so the end of an overload is no wave of store reads. */
  private shed(id: number, route: CompiledGate, ctx: GateContext): GateReply {
    if (!route.open) this.enforcer.keepWarm(route.plan, ctx);
    return this.overloaded(id);
  }

  private overloaded(id: number): GateReply {
    return errorReply(id, 'overloaded', undefined, this.shedder.refused());
  }

  /**
   * Answers one request given as JSON text (or its UTF-8 bytes); bad JSON is
   * `bad_request` with id null. At once or as a promise, as {@link dispatch}.
   */
  dispatchText(text: string | Uint8Array, conn: ConnectionContext): GateReply | Promise<GateReply> {
    const raw = parseJsonFrame(text);
    return raw === undefined ? errorReply(null, 'bad_request') : this.dispatch(raw, conn);
  }

  /**
   * Decides a connection's credential (WebSocket `Authorization` header, auth frame,
   * a datagram's `token`) on {@link CONNECTION_PLAN}, through the same enforcer as
   * every gate: a session token or a JWT access token. The shield's work lands in
   * `ctx.memo`, so the connection's first gated message repeats none of it. Answers
   * at once when the shield did; never throws.
   *
   * @example
   * ```ts
   * const admission = await dispatcher.admit({ transport: 'ws', credential: token, clientId, remoteAddress, memo });
   * if (admission.ok) registry.add(init, admission);
   * ```
   */
  admit(ctx: AuthContext): Admission | Promise<Admission> {
    const verdict = this.enforcer.decide(CONNECTION_PLAN, ctx);
    return verdict instanceof Promise ? verdict.then(admission) : admission(verdict);
  }

  /**
   * Answers a connection's refresh frame: rotates the session pair of `token` when it
   * belongs to `principalId` (the connection's principal; undefined when it has none).
   * Every live connection of the old access token, on every server, goes on with the
   * new one; a refusal changes nothing. Never throws.
   *
   * @example
   * ```ts
   * const { reply, admitted } = await dispatcher.refreshConnection(frame.token, conn.principalId);
   * if (admitted) registry.attach(conn.clientId, admitted);
   * send(JSON.stringify(reply));
   * ```
   */
  refreshConnection(token: string, principalId: string | undefined): Promise<InBandOutcome<RefreshReply>> {
    const sessions = { refresh: (t: string, p?: string) => (this.sessions ??= this.container.resolve(TokenSessionSync)).refresh(t, p) };
    return refreshInBand(sessions, token, principalId);
  }
}

/** A connection needs a principal and a credential to index; a verdict without them fails closed. */
function admission(verdict: EnforceResult): Admission {
  if (!verdict.ok) return verdict;
  const { principal, credential } = verdict;
  return principal !== undefined && credential !== undefined ? { ok: true, principal, credential } : REFUSALS.unavailable;
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as PromiseLike<unknown> | null)?.then === 'function';
}

/**
 * A handler's `PortcullisError` whose code is a real-time code answers that code,
 * with the code's fixed message; anything else is `internal`.
 */
function replyCodeOf(error: unknown): WireErrorCode {
  return error instanceof PortcullisError && isWireErrorCode(error.code) ? error.code : 'internal';
}
