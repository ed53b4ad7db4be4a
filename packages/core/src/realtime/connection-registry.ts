import type { CloseReason } from '@portcullis/protocol';
import { inject, injectable } from 'tsyringe';
import type { Transport } from '../contracts/auth-context.js';
import type { RevocationEvent, RevocationSubscribe } from '../contracts/sessions.js';
import { LOGGER_FACTORY } from '../di/tokens.js';
import { describeError } from '../errors/describe-error.js';
import { consoleLoggerFactory, type Logger, type LoggerFactory } from '../logging/logger.js';
import { TokenSessionSync } from '../session/token-session-sync.js';
import type { ConnectionAuthResult } from './connection-authenticator.js';
import type { ConnectionContext } from './connection-context.js';

/**
 * Why the registry closes a connection; transports map it (WebSocket: 4401).
 *
 * @example
 * ```ts
 * const close = (code: ConnectionCloseCode, reason: string) => ws.close(code === 'unauthorized' ? 4401 : 1011, reason);
 * ```
 */
export type ConnectionCloseCode = Extract<CloseReason, 'unauthorized'>;

/**
 * What a transport supplies when a connection opens.
 *
 * @example
 * ```ts
 * const init: ConnectionInit = { clientId, transport: 'tcp', remoteAddress, send: (frame) => write(frame), close: () => socket.end() };
 * ```
 */
export interface ConnectionInit {
  readonly clientId: string;
  readonly transport: Transport;
  readonly remoteAddress: string | undefined;
  /** Pushes a frame (a reply-like object) to the peer; the transport serialises it. */
  readonly send: (frame: unknown) => void;
  /** Closes the connection; called once, after the registry forgot it. */
  readonly close: (code: ConnectionCloseCode, reason: string) => void;
  /** A memo already warmed by `authenticateConnection`, if any. */
  readonly memo?: Map<unknown, unknown>;
  readonly tokenInFrame?: boolean;
}

/**
 * An authenticated credential to attach to a connection.
 *
 * @example
 * ```ts
 * if (auth.ok && auth.kind !== 'anonymous') registry.attach(clientId, { token, auth } satisfies ConnectionCredential);
 * ```
 */
export interface ConnectionCredential {
  readonly token: string;
  readonly auth: Extract<ConnectionAuthResult, { ok: true }>;
}

/**
 * A tracked connection; pass it to the dispatcher as its `ConnectionContext`.
 *
 * @example
 * ```ts
 * const conn: LiveConnection = registry.add(init);
 * socket.send(encodeReply(await dispatcher.dispatchText(text, conn)));
 * ```
 */
export interface LiveConnection extends ConnectionContext {
  readonly memo: Map<unknown, unknown>;
  readonly principalId: string | undefined;
  readonly send: (frame: unknown) => void;
  readonly close: (code: ConnectionCloseCode, reason: string) => void;
}

/**
 * The part of `TokenSessionSync` the registry listens to.
 *
 * @example
 * ```ts
 * const registry = new ConnectionRegistry({ onRevocation: sessions.onRevocation } satisfies RevocationSource);
 * ```
 */
export interface RevocationSource {
  readonly onRevocation: RevocationSubscribe;
}

interface Entry extends LiveConnection {
  credential: string | undefined;
  principalId: string | undefined;
  jti: string | undefined;
  fam: string | undefined;
}

/**
 * Knows which live connection holds which credential and principal. On every
 * revocation event (a logout, `revokeAllFor`, a family revocation; with Redis from
 * any server) it forgets and closes the connections holding a revoked session
 * token, JWT `jti` or principal, and clears their memo. An event naming nothing
 * (events may have been missed) clears every connection's memo instead, so the
 * next message re-checks its credential. Also the server-push API.
 *
 * @example
 * ```ts
 * const conn = registry.add({ clientId, transport: 'ws', remoteAddress, send: (f) => ws.send(JSON.stringify(f)), close: () => ws.close(4401) },
 *   { token, auth });
 * ws.on('close', () => registry.remove(clientId));
 * registry.sendToPrincipal('player-42', { type: 'event', data: 'match found' });
 * ```
 */
@injectable()
export class ConnectionRegistry {
  private readonly byId = new Map<string, Entry>();
  private readonly byCredential = new Map<string, Set<Entry>>();
  private readonly byJti = new Map<string, Set<Entry>>();
  private readonly byFamily = new Map<string, Set<Entry>>();
  private readonly byPrincipal = new Map<string, Set<Entry>>();
  private readonly unsubscribe: () => void;
  private readonly log: Logger;

  constructor(
    @inject(TokenSessionSync) revocations: RevocationSource,
    @inject(LOGGER_FACTORY) loggers: LoggerFactory = consoleLoggerFactory,
  ) {
    this.log = loggers.create('portcullis:realtime');
    this.unsubscribe = revocations.onRevocation((event) => this.revoke(event));
  }

  /** Live connections right now. */
  get size(): number {
    return this.byId.size;
  }

  /**
   * Tracks a new connection, optionally with its credential.
   *
   * @throws TypeError when the client id is already tracked.
   */
  add(init: ConnectionInit, credential?: ConnectionCredential): LiveConnection {
    if (this.byId.has(init.clientId)) throw new TypeError('a connection with this client id is already registered');
    const entry: Entry = {
      clientId: init.clientId,
      transport: init.transport,
      remoteAddress: init.remoteAddress,
      credential: undefined,
      principalId: undefined,
      jti: undefined,
      fam: undefined,
      memo: init.memo ?? new Map(),
      tokenInFrame: init.tokenInFrame,
      send: init.send,
      close: init.close,
    };
    this.byId.set(entry.clientId, entry);
    if (credential) this.attach(entry.clientId, credential);
    return entry;
  }

  /** Gives a tracked connection its (one) credential, replacing any earlier one; false when unknown. */
  attach(clientId: string, { token, auth }: ConnectionCredential): boolean {
    const entry = this.byId.get(clientId);
    if (!entry) return false;
    this.unindex(entry);
    entry.memo.clear();
    if (auth.kind === 'anonymous') return true;
    entry.credential = token;
    entry.principalId = auth.principal.id;
    index(this.byPrincipal, auth.principal.id, entry);
    if (auth.kind === 'jwt') {
      index(this.byJti, (entry.jti = auth.jti), entry);
      if (auth.fam !== undefined) index(this.byFamily, (entry.fam = auth.fam), entry);
    } else index(this.byCredential, token, entry);
    return true;
  }

  /** The tracked connection with this client id. */
  get(clientId: string): LiveConnection | undefined {
    return this.byId.get(clientId);
  }

  /** Forgets a connection (the transport calls it when the socket closes); idempotent. */
  remove(clientId: string): void {
    const entry = this.byId.get(clientId);
    if (!entry) return;
    this.byId.delete(clientId);
    this.unindex(entry);
    entry.memo.clear();
  }

  /** Pushes a frame to one client; false when it is not connected here. */
  sendTo(clientId: string, frame: unknown): boolean {
    const entry = this.byId.get(clientId);
    return entry ? this.deliver(entry, frame) : false;
  }

  /** Pushes a frame to every connection of a principal on this server; answers how many got it. */
  sendToPrincipal(principalId: string, frame: unknown): number {
    let sent = 0;
    for (const entry of this.byPrincipal.get(principalId) ?? []) if (this.deliver(entry, frame)) sent++;
    return sent;
  }

  /** Stops listening for revocations. */
  dispose(): void {
    this.unsubscribe();
  }

  private revoke(event: RevocationEvent): void {
    if (isGap(event)) {
      for (const entry of this.byId.values()) entry.memo.clear();
      return;
    }
    const doomed = new Set<Entry>();
    for (const token of event.sessionTokens ?? []) for (const entry of this.byCredential.get(token) ?? []) doomed.add(entry);
    for (const jti of event.jtis ?? []) for (const entry of this.byJti.get(jti) ?? []) doomed.add(entry);
    for (const fam of event.families ?? []) for (const entry of this.byFamily.get(fam) ?? []) doomed.add(entry);
    if (event.principalId !== undefined) for (const entry of this.byPrincipal.get(event.principalId) ?? []) doomed.add(entry);
    for (const entry of doomed) {
      this.remove(entry.clientId);
      try {
        entry.close('unauthorized', 'credential revoked');
      } catch (error) {
        this.log.warn('closing a revoked connection failed', { clientId: entry.clientId, ...describeError(error) });
      }
    }
  }

  private deliver(entry: Entry, frame: unknown): boolean {
    try {
      entry.send(frame);
      return true;
    } catch (error) {
      this.log.warn('push to a connection failed', { clientId: entry.clientId, ...describeError(error) });
      return false;
    }
  }

  private unindex(entry: Entry): void {
    if (entry.principalId !== undefined) unindex(this.byPrincipal, entry.principalId, entry);
    if (entry.fam !== undefined) unindex(this.byFamily, entry.fam, entry);
    if (entry.jti !== undefined) unindex(this.byJti, entry.jti, entry);
    else if (entry.credential !== undefined) unindex(this.byCredential, entry.credential, entry);
    entry.credential = entry.principalId = entry.jti = entry.fam = undefined;
  }
}

/** An event naming nothing means events may have been missed: nothing kept may be trusted. */
function isGap(event: RevocationEvent): boolean {
  return (event.sessionTokens?.length ?? 0) === 0 && (event.jtis?.length ?? 0) === 0 && (event.families?.length ?? 0) === 0 && event.principalId === undefined;
}

function index(map: Map<string, Set<Entry>>, key: string, entry: Entry): void {
  let set = map.get(key);
  if (!set) map.set(key, (set = new Set()));
  set.add(entry);
}

function unindex(map: Map<string, Set<Entry>>, key: string, entry: Entry): void {
  const set = map.get(key);
  if (!set) return;
  set.delete(entry);
  if (set.size === 0) map.delete(key);
}
