import type { CloseReason } from '@portcullis/protocol';
import { inject, injectable } from 'tsyringe';
import type { Transport } from '../contracts/auth-context.js';
import { LOGGER_FACTORY } from '../contracts/injection-tokens.js';
import type { Logger, LoggerFactory } from '../contracts/logger.js';
import type { FleetPush, RevocationEvent, RevocationSubscribe } from '../contracts/sessions.js';
import { describeError } from '../errors/describe-error.js';
import { consoleLoggerFactory } from '../logging/logger.js';
import { TokenSessionSync } from '../session/token-session-sync.js';
import { sessionKey } from '../session/session-token.js';
import { openTokenWith } from '../session/token-seal.js';
import type { ConnectionContext } from './connection-context.js';
import type { Admitted } from './connection-plan.js';

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
  /** The memo the connection's admission already filled, if any; the registry keeps it. */
  readonly memo?: Map<unknown, unknown>;
  readonly tokenInFrame?: boolean;
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
  /** Carries `sendToPrincipal` to the other servers; without it pushes stay on this server. */
  readonly fleetPush?: FleetPush;
}

/** The largest frame `sendToPrincipal` takes: 64 KiB of JSON (UTF-8). */
export const MAX_PUSH_FRAME_BYTES = 65_536;

interface Entry extends LiveConnection {
  credential: string | undefined;
  principalId: string | undefined;
  accepted: Admitted['credential'] | undefined;
}

/**
 * Knows which live connection holds which credential and principal, indexed from
 * the credential the enforcer accepted (session token, or JWT `jti` and login
 * family). On every revocation event (a logout, `revokeAllFor`, a family
 * revocation; with Redis from any server) it forgets and closes the connections
 * holding a revoked session token, JWT `jti`, login family or principal, and clears
 * their memo. A session token replaced by a refresh is not revoked for its connections:
 * they move to the successor token, on every server. A gap (events may have been missed) clears every connection's memo
 * instead, so the next message re-checks its credential. Also the server-push API:
 * `sendTo` reaches one connection of this server, `sendToPrincipal` every connection
 * of a principal on every server of the fleet.
 *
 * @example
 * ```ts
 * const admission = await dispatcher.admit({ transport: 'ws', credential: token, clientId, remoteAddress, memo });
 * if (admission.ok) registry.add({ clientId, transport: 'ws', remoteAddress, memo, send: (f) => ws.send(JSON.stringify(f)), close: () => ws.close(4401) }, admission);
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
  private readonly unsubscribe: Array<() => void>;
  private readonly fleet: FleetPush | undefined;
  private readonly log: Logger;

  constructor(
    @inject(TokenSessionSync) revocations: RevocationSource,
    @inject(LOGGER_FACTORY) loggers: LoggerFactory = consoleLoggerFactory,
  ) {
    this.log = loggers.create('portcullis:realtime');
    this.fleet = revocations.fleetPush;
    this.unsubscribe = [revocations.onRevocation((event) => this.revoke(event))];
    if (this.fleet) this.unsubscribe.push(this.fleet.subscribe((principalId, frame) => this.sendHere(principalId, frame)));
  }

  /** Live connections right now. */
  get size(): number {
    return this.byId.size;
  }

  /**
   * Tracks a new connection, with its admitted credential if it has one.
   *
   * @throws TypeError when the client id is already tracked.
   */
  add(init: ConnectionInit, admitted?: Admitted): LiveConnection {
    if (this.byId.has(init.clientId)) throw new TypeError('a connection with this client id is already registered');
    const entry: Entry = {
      clientId: init.clientId,
      transport: init.transport,
      remoteAddress: init.remoteAddress,
      credential: undefined,
      principalId: undefined,
      accepted: undefined,
      memo: init.memo ?? new Map(),
      tokenInFrame: init.tokenInFrame,
      send: init.send,
      close: init.close,
    };
    this.byId.set(entry.clientId, entry);
    if (admitted) this.attach(entry.clientId, admitted);
    return entry;
  }

  /**
   * Gives a tracked connection its (one) credential, replacing any earlier one; false
   * when unknown (or for the `sid` of a UDP datagram, which is no connection's). The connection's memo is kept: the admission just filled it for
   * this credential, and entries for another credential are never reused.
   */
  attach(clientId: string, { principal, credential }: Admitted): boolean {
    const entry = this.byId.get(clientId);
    // A datagram's sid names no connection: it stands for one datagram only.
    if (!entry || credential.kind === 'udp-session') return false;
    this.unindex(entry);
    entry.credential = credential.token;
    entry.accepted = credential;
    entry.principalId = principal.id;
    index(this.byPrincipal, principal.id, entry);
    if (credential.kind === 'session') index(this.byCredential, sessionKey(credential.token), entry);
    else {
      index(this.byJti, credential.jti, entry);
      if (credential.family !== undefined) index(this.byFamily, credential.family, entry);
    }
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

  /**
   * Pushes a frame to every authenticated connection of a principal, on this server at once
   * and, with Redis, on every other server of the fleet. Answers how many connections on
   * this server got it (the other servers do not report back).
   *
   * Delivery is at most once: a push reaches the connections that are open and hold a live
   * credential of the principal when it arrives at their server; nothing is queued or
   * retried, so a server whose link to Redis is down, or a connection that opens a moment
   * later, misses it (a failed publish is logged, and the push reaches this server only).
   * Pushes one server sends arrive at each other server in the order it sent them, and
   * after every revocation it announced before; across servers there is no order. A
   * connection closed by a revocation gets no later push.
   *
   * @throws TypeError when `principalId` is not a non-empty string, or JSON cannot encode
   * `frame` (a `BigInt`, a cycle, or nothing at all); nothing is sent.
   * @throws RangeError when the frame's JSON is over {@link MAX_PUSH_FRAME_BYTES}; nothing is sent.
   * @example
   * ```ts
   * const here = registry.sendToPrincipal('player-42', { type: 'event', data: 'match found' });
   * ```
   */
  sendToPrincipal(principalId: string, frame: unknown): number {
    if (typeof principalId !== 'string' || principalId === '') throw new TypeError('sendToPrincipal needs a principal id');
    const json = encodePushFrame(frame);
    const sent = this.sendHere(principalId, frame);
    void this.fleet?.publish(principalId, json);
    return sent;
  }

  /** Stops listening for revocations and for pushes from other servers. */
  dispose(): void {
    for (const off of this.unsubscribe) off();
  }

  private sendHere(principalId: string, frame: unknown): number {
    let sent = 0;
    for (const entry of this.byPrincipal.get(principalId) ?? []) if (this.deliver(entry, frame)) sent++;
    return sent;
  }

  private revoke(event: RevocationEvent): void {
    if (event.kind === 'gap') {
      for (const entry of this.byId.values()) entry.memo.clear();
      return;
    }
    const successors = new Map((event.successors ?? []).map(({ from, sealed }) => [from, sealed]));
    const doomed = new Set<Entry>();
    for (const key of event.sessionKeys ?? []) {
      const entries = this.byCredential.get(key) ?? [];
      const sealed = successors.get(key);
      // Every connection under `key` holds the old token, the one the successor is sealed under.
      const held = [...entries][0]?.credential;
      const successor = sealed === undefined || held === undefined ? undefined : openTokenWith('access successor', held, sealed);
      if (successor === undefined) for (const entry of entries) doomed.add(entry);
      else this.move(key, successor);
    }
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

  /**
   * A refresh is a continuation: the connections holding the replaced session token go on
   * with its successor, and their memo is cleared so the next message is checked against it.
   */
  private move(fromKey: string, to: string): void {
    for (const entry of [...(this.byCredential.get(fromKey) ?? [])]) {
      unindex(this.byCredential, fromKey, entry);
      entry.credential = to;
      entry.accepted = { kind: 'session', token: to };
      index(this.byCredential, sessionKey(to), entry);
      entry.memo.clear();
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
    const accepted = entry.accepted;
    if (entry.principalId !== undefined) unindex(this.byPrincipal, entry.principalId, entry);
    if (accepted?.kind === 'session') unindex(this.byCredential, sessionKey(accepted.token), entry);
    else if (accepted?.kind === 'jwt') {
      unindex(this.byJti, accepted.jti, entry);
      if (accepted.family !== undefined) unindex(this.byFamily, accepted.family, entry);
    }
    entry.credential = entry.principalId = entry.accepted = undefined;
  }
}

function encodePushFrame(frame: unknown): string {
  let json: string | undefined;
  try {
    json = JSON.stringify(frame);
  } catch {
    throw new TypeError('a pushed frame must be JSON: this one cannot be encoded');
  }
  if (json === undefined) throw new TypeError('a pushed frame must be JSON: this one encodes to nothing');
  if (json.length > MAX_PUSH_FRAME_BYTES / 3 && Buffer.byteLength(json) > MAX_PUSH_FRAME_BYTES) {
    throw new RangeError(`a pushed frame is at most ${MAX_PUSH_FRAME_BYTES} bytes of JSON`);
  }
  return json;
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
