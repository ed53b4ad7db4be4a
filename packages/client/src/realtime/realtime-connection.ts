import { frameKind, readAuthReply, readRefreshReply, type AuthFrame, type RefreshFrame } from '@portcullis/protocol';
import { parseUpgradeResponse, type SessionTokens } from '../http/auth-responses.js';
import { isPortcullisClientError, PortcullisClientError } from '../errors/portcullis-client-error.js';
import { Emitter } from '../util/emitter.js';
import { backoffDelay, DEFAULT_BACKOFF, type BackoffOptions } from './backoff.js';
import { errorFromReply, PendingRequests, type PendingRequest } from './pending-requests.js';
import type { ConnectionEvents, ConnectionState, RealtimeConnectionOptions, RequestOptions } from './connection-types.js';
import type { InboundFrame, LinkClosed, LinkRequest, RealtimeLink, RealtimeTransport } from './realtime-transport.js';

const FATAL: ReadonlySet<string> = new Set(['not_authenticated', 'invalid_credentials', 'locked_out', 'captcha_failed']);

/**
 * A real-time connection over any {@link RealtimeTransport}: numbered requests
 * with timeouts, server-push events, and reconnects with capped, jittered
 * backoff, renewing the credential first when it expired or was refused.
 * Requests made while (re)connecting wait for the link, within their timeout.
 * A `rate_limited` or `overloaded` reply (the gate did not run) backs that gate off
 * for the server's `retryAfterMs` and sends the request again (see
 * `RealtimeConnectionOptions.rateLimited`).
 *
 * @example
 * ```ts
 * const conn = await client.connect();
 * conn.on('push', (frame) => console.log('server says', frame));
 * const moved = await conn.request<{ x: number; y: number }>('/game', 'move', { x: 1, y: 2 });
 * conn.close();
 * ```
 */
export class RealtimeConnection {
  readonly #options: RealtimeConnectionOptions;
  readonly #backoff: BackoffOptions | false;
  readonly #events = new Emitter<ConnectionEvents>();
  readonly #pending = new PendingRequests((id) => this.#link?.settle(id));
  #state: ConnectionState = 'idle';
  #link: RealtimeLink | undefined;
  #linkToken: string | null = null;
  #generation = 0;
  #nextId = 1;
  #wake: (() => void) | undefined;
  /** In-band frames awaiting their answer, in the order sent (the server answers in order). */
  readonly #control: Array<{ readonly type: 'refresh' | 'auth'; resolve(frame: Readonly<Record<string, unknown>>): void; reject(error: PortcullisClientError): void }> = [];
  /** Gates backed off after `rate_limited`: `portal\ngate` → epoch ms when they may be sent to again. */
  readonly #heldUntil = new Map<string, number>();
  readonly #holdTimers = new Set<ReturnType<typeof setTimeout>>();

  constructor(options: RealtimeConnectionOptions) {
    this.#options = options;
    this.#backoff = options.reconnect === false ? false : { ...DEFAULT_BACKOFF, ...options.reconnect };
  }

  /** `idle` → `connecting` → `open` ⇄ `reconnecting` → `closed`. */
  get state(): ConnectionState {
    return this.#state;
  }

  /** The credential this connection carries: `session`, `jwt` or `none`. */
  get credentialKind(): RealtimeConnectionOptions['credential'] {
    return this.#options.credential;
  }

  /** The transport's kind: `ws`, `tcp` or `udp`. */
  get transport(): RealtimeTransport['kind'] {
    return this.#options.transport.kind;
  }

  /** Listens to `open`, `reconnecting`, `push` or `close`; answers the unsubscribe function. */
  on<E extends keyof ConnectionEvents>(event: E, listener: (payload: ConnectionEvents[E]) => void): () => void {
    return this.#events.on(event, listener);
  }

  /** Opens the first link; rejects (and closes) when that fails. */
  async open(): Promise<void> {
    if (this.#state !== 'idle') throw new PortcullisClientError('unexpected_response', 'the connection was already opened');
    this.#state = 'connecting';
    try {
      await this.#openLink(undefined);
    } catch (error) {
      const failure = asClientError(error);
      this.#finish(failure);
      throw failure;
    }
    this.#opened(false);
  }

  /** Sends a request to `gate` of `portal` and resolves with the reply's `data`. */
  request<T = unknown>(portal: string, gate: string, data?: unknown, options: RequestOptions = {}): Promise<T> {
    if (this.#state === 'closed' || this.#state === 'idle') {
      return Promise.reject(new PortcullisClientError('connection_closed', `the connection is ${this.#state}`));
    }
    const frame = { id: this.#nextId++, portal, gate, data: data ?? null };
    const { entry, reply } = this.#pending.add(frame, options.timeoutMs ?? this.#options.requestTimeoutMs ?? 10_000, options.signal);
    if (this.#credentialStale()) this.#relink(undefined);
    else if (!this.#hold(entry)) this.#send(entry);
    return reply as Promise<T>;
  }

  /** True when in-band refresh and auth frames can be sent now (an open WebSocket or TCP link). */
  get inBand(): boolean {
    return this.#state === 'open' && this.#link?.control !== undefined;
  }

  /** The credential the open link was authenticated with (or moved to), or null. */
  get credentialToken(): string | null {
    return this.#linkToken;
  }

  /**
   * Rotates the session pair over this connection (`{"type":"refresh"}`); the server
   * moves every connection of the old access token, this one included, to the new pair.
   * Rejects with the server's code (`unauthorized`, `forbidden`, …) and leaves the
   * connection as it was. `PortcullisClient` calls it; call `client.refresh()` instead.
   *
   * @example
   * ```ts
   * const next = await conn.refreshInBand(client.tokens.session!.refreshToken);
   * ```
   */
  async refreshInBand(refreshToken: string): Promise<SessionTokens> {
    const answer = readRefreshReply(await this.#sendControl({ type: 'refresh', token: refreshToken }));
    if (answer === undefined) throw new PortcullisClientError('unexpected_response', 'the refresh answer is malformed');
    if (!answer.ok) throw new PortcullisClientError(answer.error.code, answer.error.message, { retryAfterMs: answer.error.retryAfterMs });
    const tokens = parseUpgradeResponse(answer);
    if (this.#linkToken !== null && this.#options.credential === 'session') this.#linkToken = tokens.accessToken;
    return tokens;
  }

  /**
   * Replaces the connection's credential with `token` of the same principal (a second
   * auth frame): how a JWT connection takes a fresh JWT without reconnecting. When the
   * server refuses it, the connection reconnects with a renewed credential.
   *
   * @example
   * ```ts
   * await conn.reauthenticate(freshJwt);
   * ```
   */
  async reauthenticate(token: string): Promise<void> {
    if (token === this.#linkToken) return;
    try {
      const answer = readAuthReply(await this.#sendControl({ type: 'auth', token }));
      if (answer?.ok !== true) {
        throw answer?.ok === false
          ? new PortcullisClientError(answer.error.code, 'the server kept the old credential', { retryAfterMs: answer.error.retryAfterMs })
          : new PortcullisClientError('unexpected_response', 'the server kept the old credential');
      }
      this.#linkToken = token;
    } catch (error) {
      this.#relink(undefined);
      throw error;
    }
  }

  /** A refresh made elsewhere (over HTTP, in another tab) moved this connection on the server: follow it. */
  adopt(from: string, to: string): void {
    if (this.#linkToken === from) this.#linkToken = to;
  }

  #sendControl(frame: RefreshFrame | AuthFrame): Promise<Readonly<Record<string, unknown>>> {
    const link = this.#link;
    if (this.#state !== 'open' || link?.control === undefined) {
      return Promise.reject(new PortcullisClientError('connection_closed', 'no open link takes in-band frames'));
    }
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        const at = this.#control.indexOf(entry);
        if (at >= 0) this.#control.splice(at, 1);
        reject(new PortcullisClientError('timeout', `no answer to the ${frame.type} frame`));
      }, this.#options.requestTimeoutMs ?? 10_000);
      const entry = {
        type: frame.type,
        resolve: (answer: Readonly<Record<string, unknown>>) => { clearTimeout(timer); resolve(answer); },
        reject: (error: PortcullisClientError) => { clearTimeout(timer); reject(error); },
      };
      this.#control.push(entry);
      try {
        link.control!(frame);
      } catch (error) {
        this.#control.pop();
        entry.reject(asClientError(error));
      }
    });
  }

  /** Closes the connection for good; pending requests reject with `connection_closed`. */
  close(): void {
    this.#finish(undefined);
  }

  async #openLink(refused: string | null | undefined): Promise<void> {
    const { credential: kind, credentials, transport } = this.#options;
    let token: string | null = null;
    if (kind !== 'none') token = refused ? await credentials.renewCredential(kind, refused) : await credentials.credential(kind);
    const generation = ++this.#generation;
    const sink = {
      frame: (frame: InboundFrame) => { if (generation === this.#generation) this.#onFrame(frame); },
      closed: (info: LinkClosed) => { if (generation === this.#generation) this.#onLinkClosed(info); },
    };
    const request = { baseUrl: this.#options.baseUrl, handshakeTimeoutMs: this.#options.handshakeTimeoutMs ?? 5_000 };
    let link: RealtimeLink;
    try {
      link = await transport.open(this.#linkRequest(request, token), sink);
    } catch (error) {
      if (kind === 'none' || token === null || !isPortcullisClientError(error, 'unauthorized', 'invalid_token')) throw error;
      token = await credentials.renewCredential(kind, token);
      link = await transport.open(this.#linkRequest(request, token), sink);
    }
    if (this.#isClosed() || generation !== this.#generation) {
      link.close();
      throw new PortcullisClientError('connection_closed', 'the connection was closed while connecting');
    }
    this.#link = link;
    this.#linkToken = token;
  }

  #linkRequest(request: Omit<LinkRequest, 'credential' | 'udpKey'>, token: string | null): LinkRequest {
    const udpKey = token === null ? undefined : this.#options.credentials.udpKeyOf?.(token);
    return udpKey === undefined ? { ...request, credential: token } : { ...request, credential: token, udpKey };
  }

  #opened(reconnected: boolean): void {
    this.#state = 'open';
    this.#events.emit('open', { reconnected });
    for (const entry of this.#pending.all()) if (!entry.sent && !this.#heldFor(entry)) this.#send(entry);
  }

  #send(entry: PendingRequest): void {
    if (this.#state !== 'open' || this.#link === undefined) return;
    try {
      this.#link.send(entry.frame);
      entry.sent = true;
    } catch (error) {
      entry.reject(asClientError(error));
    }
  }

  #credentialStale(): boolean {
    const kind = this.#options.credential;
    return this.#state === 'open' && kind !== 'none' && this.#options.credentials.peekCredential(kind) !== this.#linkToken;
  }

  #onFrame(frame: InboundFrame): void {
    const kind = frameKind(frame);
    if (kind === 'push') this.#events.emit('push', frame);
    if ((kind === 'refresh' || kind === 'auth') && this.#control[0]?.type === kind) return this.#control.shift()!.resolve(frame);
    if (kind !== 'reply' || typeof frame['id'] !== 'number') return;
    const entry = this.#pending.get(frame['id']);
    if (entry === undefined) return;
    if (frame['ok']) return entry.resolve(frame['data']);
    const error = errorFromReply(frame);
    if ((error.code === 'rate_limited' || error.code === 'overloaded') && this.#backOff(entry, error.retryAfterMs ?? 1000)) return;
    if (this.#retriesRefusal(entry, error)) {
      entry.retried = true;
      entry.sent = false;
      this.#relink(this.#linkToken ?? undefined);
      return;
    }
    entry.reject(error);
  }

  /**
   * Backs the entry's gate off for `waitMs` and sends the entry again then, if its
   * timeout leaves time for it; false when the caller should get `rate_limited` now.
   */
  #backOff(entry: PendingRequest, waitMs: number): boolean {
    if (this.#options.rateLimited === 'reject') return false;
    const until = Date.now() + waitMs;
    if (until >= entry.deadline) return false;
    const gate = gateKey(entry);
    this.#heldUntil.set(gate, Math.max(this.#heldUntil.get(gate) ?? 0, until));
    entry.sent = false;
    this.#hold(entry);
    return true;
  }

  /** Milliseconds the entry's gate is still backed off; 0 when it may be sent now. */
  #heldFor(entry: PendingRequest): number {
    const gate = gateKey(entry);
    const until = this.#heldUntil.get(gate);
    if (until === undefined) return 0;
    const wait = until - Date.now();
    if (wait <= 0) this.#heldUntil.delete(gate);
    return Math.max(0, wait);
  }

  /** While the entry's gate is backed off, sends the entry once the back-off ends; false when it may be sent now. */
  #hold(entry: PendingRequest): boolean {
    const wait = this.#heldFor(entry);
    if (wait === 0) return false;
    const timer = setTimeout(() => {
      this.#holdTimers.delete(timer);
      if (entry.sent || this.#pending.get(entry.frame.id) !== entry) return;
      if (!this.#hold(entry)) this.#send(entry);
    }, wait);
    this.#holdTimers.add(timer);
    return true;
  }

  /** UDP has no connection that a revocation or restart could close, so a refused session is renewed once per request. */
  #retriesRefusal(entry: PendingRequest, error: PortcullisClientError): boolean {
    return error.code === 'unauthorized' && !entry.retried && this.transport === 'udp' && this.#linkToken !== null;
  }

  #onLinkClosed(info: LinkClosed): void {
    this.#link = undefined;
    this.#dropControl(info.error);
    this.#pending.rejectAll(info.error ?? new PortcullisClientError('connection_closed', 'the connection dropped before the reply'), (e) => e.sent);
    if (this.#isClosed()) return;
    if (this.#backoff === false) return this.#finish(info.error ?? new PortcullisClientError('connection_closed', 'the server closed the connection'));
    void this.#reconnect(info.refused ? (this.#linkToken ?? undefined) : undefined, !info.refused);
  }

  /** Replaces the link at once, e.g. with a renewed credential. */
  #relink(refused: string | undefined): void {
    if (this.#state !== 'open') return;
    const link = this.#link;
    this.#link = undefined;
    this.#generation++;
    link?.close();
    this.#dropControl(undefined);
    const resend = this.transport === 'udp';
    this.#pending.rejectAll(new PortcullisClientError('connection_closed', 'the connection was renewed before the reply'), (e) => e.sent && !resend);
    for (const entry of this.#pending.all()) entry.sent = false;
    void this.#reconnect(refused, false);
  }

  async #reconnect(refused: string | undefined, wait: boolean): Promise<void> {
    this.#state = 'reconnecting';
    const backoff = this.#backoff === false ? { ...DEFAULT_BACKOFF, maxAttempts: 1 } : this.#backoff;
    let lastError: PortcullisClientError | undefined;
    for (let attempt = 0; attempt < backoff.maxAttempts; attempt++) {
      const delayMs = attempt === 0 && !wait ? 0 : backoffDelay(attempt, backoff);
      this.#events.emit('reconnecting', { attempt: attempt + 1, delayMs, ...(lastError ? { error: lastError } : {}) });
      await this.#sleep(delayMs);
      if (this.#isClosed()) return;
      try {
        await this.#openLink(refused);
        return this.#opened(true);
      } catch (error) {
        lastError = asClientError(error);
        refused = undefined;
        if (this.#isClosed()) return;
        if (FATAL.has(lastError.code)) return this.#finish(lastError);
      }
    }
    this.#finish(lastError ?? new PortcullisClientError('connection_closed', 'could not reconnect'));
  }

  #dropControl(error: PortcullisClientError | undefined): void {
    for (const entry of this.#control.splice(0)) entry.reject(error ?? new PortcullisClientError('connection_closed', 'the connection closed before the answer'));
  }

  #isClosed(): boolean {
    return this.#state === 'closed';
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => { this.#wake = undefined; resolve(); }, ms);
      this.#wake = () => { clearTimeout(timer); this.#wake = undefined; resolve(); };
    });
  }

  #finish(error: PortcullisClientError | undefined): void {
    if (this.#isClosed()) return;
    this.#state = 'closed';
    this.#generation++;
    this.#wake?.();
    for (const timer of this.#holdTimers) clearTimeout(timer);
    this.#holdTimers.clear();
    this.#link?.close();
    this.#link = undefined;
    this.#dropControl(error);
    this.#pending.rejectAll(error ?? new PortcullisClientError('connection_closed', 'the connection was closed'));
    this.#events.emit('close', error ? { error } : {});
  }
}

function gateKey(entry: PendingRequest): string {
  return `${entry.frame.portal}\n${entry.frame.gate}`;
}

function asClientError(error: unknown): PortcullisClientError {
  return error instanceof PortcullisClientError
    ? error
    : new PortcullisClientError('network_error', 'the connection failed', { cause: error });
}
