/**
 * The per-connection half of the real-time protocol, shared by every
 * connection-oriented transport (WebSocket, TCP): the optional or required auth
 * frame first, then pipelined requests dispatched as they arrive and answered in
 * order, the connection tracked in the registry so revocation can close it. A
 * transport only moves messages in and out and maps the close reasons.
 */
import { performance } from 'node:perf_hooks';
import { encodeReply, parseJsonFrame, readAuthFrame, readRefreshFrame, type GateReply } from '@portcullis/protocol';
import { REFUSALS } from '../contracts/refusals.js';
import { authReply } from './auth-frame.js';
import type { LiveConnection } from './connection-registry.js';
import { closeReasonOf, type Admission, type Admitted } from './connection-plan.js';
import type { ConnectionProtocolOptions, ProtocolCloseReason } from './connection-protocol-options.js';
import { reauthentication, type InBandOutcome } from './in-band-credentials.js';
import { ReplySequencer } from './reply-sequencer.js';

type State = 'awaiting-auth' | 'authenticating' | 'open' | 'closed';

/**
 * How an in-band refresh or second auth frame ended; `memo` is what the shield kept while it
 * checked the new credential (a JWT's verified signature), which the connection takes over.
 */
type Resumption = InBandOutcome<unknown> & { readonly memo?: Map<unknown, unknown> };

/** What one read of a Node socket takes at most (libuv's read buffer): a read that filled it may have left more behind. */
const READ_BUFFER_BYTES = 65_536;

/**
 * Drives one connection. A refused auth frame is answered
 * `{"type":"auth","ok":false,…}` and closed with `unauthorized`; so is a
 * connection whose credential the registry reports revoked. Once open, a refresh
 * frame rotates the connection's session pair and a second auth frame of the same
 * principal replaces its token; either refusal is answered and leaves the connection
 * as it was. Requests that arrive while a credential is being checked wait and are
 * answered after its reply.
 * A connection whose first message does not arrive within `authTimeoutMs`, and an
 * anonymous one that sends nothing for `anonymousIdleTimeoutMs`, is closed with
 * `unauthorized`; its `authTicket` is left as soon as it no longer waits.
 *
 * @example
 * ```ts
 * const protocol = new ConnectionProtocol({
 *   dispatcher, registry, transport: 'tcp', clientId, remoteAddress, handshake: 'required',
 *   send: (text) => socket.write(encodeFrame(text)),
 *   close: () => socket.end(),
 * });
 * decoderFrames.forEach((body) => protocol.receive(body));
 * socket.on('close', () => protocol.dispose());
 * ```
 */
export class ConnectionProtocol {
  private state: State;
  private readonly options: ConnectionProtocolOptions;
  // Read for every message, so kept here rather than read through `options`: with thousands of
  // connections each object a message reads of its connection is a cache miss (bench `messages`).
  private readonly dispatcher: ConnectionProtocolOptions['dispatcher'];
  private readonly send: ConnectionProtocolOptions['send'];
  private readonly replies: ReplySequencer<string>;
  private readonly queued: (string | Uint8Array)[] = [];
  private readonly connection: LiveConnection;
  private heldDuringAuth = false;
  /** When a read last took everything the socket held ({@link noteRead}), and the longest the requests of the current read can have waited. */
  private drainedAt = Number.NEGATIVE_INFINITY;
  private readGapMs = Number.POSITIVE_INFINITY;
  private authDeadline: ReturnType<typeof setTimeout> | undefined;
  private idleDeadline: ReturnType<typeof setTimeout> | undefined;

  constructor(options: ConnectionProtocolOptions) {
    this.options = options;
    this.dispatcher = options.dispatcher;
    this.send = options.send;
    this.state = options.handshake === 'done' ? 'open' : 'awaiting-auth';
    if (options.handshake === 'done') options.authTicket?.leave();
    else if (options.authTimeoutMs !== undefined) this.authDeadline = unref(setTimeout(() => this.shut('unauthorized', 'no auth frame in time'), options.authTimeoutMs));
    this.replies = new ReplySequencer<string>({
      deliver: (text) => this.sendText(text),
      maxPending: options.maxPending,
      onSaturated: options.onSaturated,
      onRelieved: options.onRelieved,
    });
    this.connection = this.track(options.handshake === 'done' ? options.credential : undefined);
  }

  /** The connection context handed to the dispatcher (a registry `LiveConnection` when tracked). */
  get context(): LiveConnection {
    return this.connection;
  }

  /** True once the handshake is over and requests are answered. */
  get isOpen(): boolean {
    return this.state === 'open';
  }

  /**
   * The transport is about to feed the messages of one read of its socket (a stream's
   * `data` event of `chunkBytes`, with `bufferedBytes` still in the stream's own buffer: a
   * paused socket's backlog). A read of less than a full read buffer (64 KiB) with nothing
   * left buffered took everything the socket held. A request in this
   * read arrived after the last read that drained the socket, so it cannot have waited
   * longer than the time since then: while the event loop is behind, the dispatcher
   * answers such a request instead of shedding it for a lag it did not wait through (see
   * `GateDispatcher.shedWhenBehind`). A transport that does not call this, and requests
   * that waited for a credential check, are judged by the lag alone.
   *
   * @example
   * ```ts
   * socket.on('data', (chunk) => {
   *   protocol.noteRead(chunk.length, socket.readableLength);
   *   for (const frame of decoder.push(chunk)) protocol.receive(frame);
   * });
   * ```
   */
  noteRead(chunkBytes: number, bufferedBytes: number): void {
    const now = performance.now();
    this.readGapMs = now - this.drainedAt;
    if (chunkBytes < READ_BUFFER_BYTES && bufferedBytes === 0) this.drainedAt = now;
  }

  /** Feeds one message (JSON text or its UTF-8 bytes) from the peer. */
  receive(message: string | Uint8Array): void {
    switch (this.state) {
      case 'open':
        this.idleDeadline?.refresh();
        this.dispatch(parseJsonFrame(message));
        return;
      case 'awaiting-auth':
        this.first(message);
        return;
      case 'authenticating':
        this.queued.push(message);
        if (this.queued.length === this.replies.maxPending) {
          this.heldDuringAuth = true;
          this.options.onSaturated?.();
        }
        return;
      case 'closed':
        return;
    }
  }

  /** Forgets the connection; the transport calls it once the socket is gone. Idempotent. */
  dispose(): void {
    if (this.state === 'closed') return;
    this.state = 'closed';
    clearTimeout(this.authDeadline);
    clearTimeout(this.idleDeadline);
    this.options.authTicket?.leave();
    this.queued.length = 0;
    this.replies.close();
    this.options.registry.remove(this.options.clientId);
  }

  private first(message: string | Uint8Array): void {
    clearTimeout(this.authDeadline);
    const raw = parseJsonFrame(message);
    const frame = readAuthFrame(raw);
    if (frame === undefined) {
      if (this.options.handshake === 'required') return this.shut('bad_request', 'the first frame must be an auth frame');
      this.state = 'open';
      this.openedAnonymously();
      return this.dispatch(raw);
    }
    this.state = 'authenticating';
    if (frame.token === null) return this.authenticated(ANONYMOUS);
    const { clientId, transport, remoteAddress } = this.options;
    let admission: Admission | Promise<Admission>;
    try {
      admission = this.options.dispatcher.admit({ transport, credential: frame.token, clientId, remoteAddress, memo: this.connection.memo });
    } catch {
      admission = UNAVAILABLE;
    }
    if (!(admission instanceof Promise)) return this.authenticated(admission);
    admission.then((answer) => this.authenticated(answer), () => this.authenticated(UNAVAILABLE)).catch(() => this.abandon());
  }

  /** A request goes to its gate; a refresh or auth frame changes the connection's credential. */
  private dispatch(raw: unknown): void {
    const refresh = readRefreshFrame(raw);
    const auth = refresh === undefined ? readAuthFrame(raw) : undefined;
    if (refresh === undefined && auth === undefined) {
      const reply = this.dispatcher.dispatch(raw === undefined ? INVALID_JSON : raw, this.connection, this.readGapMs);
      this.replies.push(reply instanceof Promise ? reply.then(encodeReply) : encodeReply(reply));
      return;
    }
    const { dispatcher } = this.options;
    const principalId = this.connection.principalId;
    const outcome: Promise<Resumption> = refresh !== undefined
      ? dispatcher.refreshConnection(refresh.token, principalId)
      : this.reauthenticate(auth!.token, principalId);
    // Requests behind the frame wait for it, so each is checked against the credential it follows.
    this.state = 'authenticating';
    this.replies.push(outcome.then(
      (answer) => this.resumed(answer),
      () => this.resumed({ reply: authReply(UNAVAILABLE) }),
    ));
  }

  private async reauthenticate(token: string | null, principalId: string | undefined): Promise<Resumption> {
    if (token === null) return { reply: authReply({ ok: false, code: 'forbidden', message: 'an authenticated connection keeps a principal' }) };
    const { clientId, transport, remoteAddress, dispatcher } = this.options;
    // Decided apart from the connection's memo: a refused frame leaves the connection as it was.
    const memo = new Map<unknown, unknown>();
    const outcome = reauthentication(await dispatcher.admit({ transport, credential: token, clientId, remoteAddress, memo }), principalId);
    return outcome.admitted === undefined ? outcome : { ...outcome, memo };
  }

  private resumed({ reply, admitted, memo }: Resumption): string {
    if (this.state === 'closed') return JSON.stringify(reply);
    if (admitted !== undefined) {
      clearTimeout(this.idleDeadline);
      this.idleDeadline = undefined;
      // Entries of the old credential could never match the new one; the new one's (a verified
      // signature) spare its next message the same check.
      this.connection.memo.clear();
      if (memo !== undefined) for (const [key, value] of memo) this.connection.memo.set(key, value);
      this.options.registry.attach(this.options.clientId, admitted);
    }
    this.state = 'open';
    const text = JSON.stringify(reply);
    queueMicrotask(() => this.release());
    return text;
  }

  /** Feeds the requests that waited for a credential check. */
  private release(): void {
    if (this.state !== 'open') return;
    // They waited for the check, however recently they were read.
    this.readGapMs = Number.POSITIVE_INFINITY;
    for (const message of this.queued.splice(0)) this.receive(message);
    if (this.heldDuringAuth) {
      this.heldDuringAuth = false;
      if (!this.replies.isSaturated) this.options.onRelieved?.();
    }
  }

  private authenticated(admission: Admission | typeof ANONYMOUS): void {
    if (this.state !== 'authenticating') return;
    if (!admission.ok) {
      this.sendText(JSON.stringify(authReply(admission)));
      const reason = closeReasonOf(admission);
      return this.shut(reason, reason === 'unavailable' ? 'authentication unavailable' : 'authentication refused');
    }
    if (admission !== ANONYMOUS) this.options.registry.attach(this.options.clientId, admission as Admitted);
    this.state = 'open';
    if (admission === ANONYMOUS) this.openedAnonymously();
    else this.options.authTicket?.leave();
    this.sendText(JSON.stringify(AUTH_OK));
    this.release();
  }

  /** No longer waiting; from now on a quiet anonymous connection is closed after the idle timeout. */
  private openedAnonymously(): void {
    this.options.authTicket?.leave();
    const idleMs = this.options.anonymousIdleTimeoutMs;
    if (idleMs !== undefined && idleMs > 0) this.idleDeadline = unref(setTimeout(() => this.shut('unauthorized', 'idle anonymous connection'), idleMs));
  }

  private track(admitted: Admitted | undefined): LiveConnection {
    const { registry, clientId, transport, remoteAddress, memo } = this.options;
    const init = {
      clientId,
      transport,
      remoteAddress,
      memo,
      send: (frame: unknown) => this.sendText(encodePush(frame)),
      close: () => this.revoked(),
    };
    return registry.add(init, admitted);
  }

  private revoked(): void {
    if (this.state === 'closed') return;
    this.sendText(JSON.stringify(authReply(REVOKED)));
    this.shut('unauthorized', 'credential revoked');
  }

  /** A transport whose `send` throws has lost its socket: close instead of letting the throw escape into a promise. */
  private sendText(text: string): void {
    if (this.state === 'closed') return;
    try {
      this.send(text);
    } catch {
      this.abandon();
    }
  }

  private abandon(): void {
    if (this.state === 'closed') return;
    this.dispose();
    try {
      this.options.close('unavailable', 'the connection failed');
    } catch {
      // the transport's socket is already gone; nothing is left to close
    }
  }

  private shut(reason: ProtocolCloseReason, detail: string): void {
    if (this.state === 'closed') return;
    this.dispose();
    this.options.close(reason, detail);
  }
}

/** Not a request object: the dispatcher answers it `bad_request` with id null, as bad JSON. */
const INVALID_JSON = Symbol('invalid-json');
const UNAVAILABLE: Admission = REFUSALS.unavailable;
const REVOKED: Admission = Object.freeze({ ok: false, code: 'unauthorized', message: 'the credential was revoked' });
/** `{"type":"auth","token":null}`: an anonymous connection, for open gates only. */
const ANONYMOUS = Object.freeze({ ok: true } as const);
const AUTH_OK = authReply(ANONYMOUS);

/** A deadline does not keep the process alive on its own: the socket does while it is open. */
function unref(timer: ReturnType<typeof setTimeout>): ReturnType<typeof setTimeout> {
  timer.unref?.();
  return timer;
}

function encodePush(frame: unknown): string {
  return typeof frame === 'object' && frame !== null && 'ok' in frame && 'id' in frame ? encodeReply(frame as GateReply) : JSON.stringify(frame);
}
