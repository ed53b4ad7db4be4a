/**
 * Turns an express request into the transport-neutral `AuthContext`. No token
 * is parsed here: the bearer text is handed to the shields as it came.
 */
import { randomUUID } from 'node:crypto';
import type { Socket } from 'node:net';
import { bearerCredential, type AuthContext } from '@portcullis/core';
import type { Request } from 'express';
import { clientIp } from './caller-helpers.js';

// Kept on the socket under symbols (not reachable from request input), so they
// live and die with the connection without a WeakMap lookup per request.
const CONNECTION_ID = Symbol('portcullis:connection-id');
const CONNECTION_MEMO = Symbol('portcullis:connection-memo');
type TaggedSocket = Socket & { [CONNECTION_ID]?: string; [CONNECTION_MEMO]?: Map<unknown, unknown> };

/**
 * The default client id: one id per TCP connection, so the requests a client
 * sends over one keep-alive connection share it.
 *
 * @example
 * ```ts
 * createPortcullisApp(container, { controllers, clientId: (req) => req.get('x-client-id') ?? connectionClientId(req) });
 * ```
 */
export function connectionClientId(req: Request): string {
  const socket = req.socket as TaggedSocket;
  return (socket[CONNECTION_ID] ??= randomUUID());
}

/**
 * The shields' memo of one keep-alive connection. Shields key what they keep by
 * the exact credential and re-check expiry and revocation on every request, so a
 * connection that carries several credentials stays correct (it only misses).
 */
export function connectionMemo(req: Request): Map<unknown, unknown> {
  const socket = req.socket as TaggedSocket;
  return (socket[CONNECTION_MEMO] ??= new Map());
}

/** Where the request's auth state is linked from its context (set by request-auth). */
export const CONTEXT_OWNER = Symbol('portcullis:context-owner');

/**
 * The `AuthContext` of one HTTP request. Every field is an own data property, so a
 * shield that copies the context (`{ ...ctx, credential }`) to hand a built-in
 * shield keeps them all.
 */
class HttpAuthContext implements AuthContext {
  readonly transport = 'http' as const;
  readonly clientId: string;
  readonly remoteAddress: string | undefined;
  readonly route: { readonly method: string; readonly path: string };
  [CONTEXT_OWNER]: unknown = undefined;

  constructor(
    readonly credential: string | undefined,
    readonly memo: Map<unknown, unknown>,
    req: Request,
    clientIdOf: (req: Request) => string,
  ) {
    this.clientId = clientIdOf(req);
    this.remoteAddress = clientIp(req);
    this.route = { method: req.method, path: req.path };
  }
}

/**
 * Builds the `AuthContext` of an HTTP request: the bearer credential, the client
 * id, the client address (`req.ip`, which honours the app's `trust proxy` and
 * nothing else), the route, and the shields' memo (per connection unless
 * `perConnectionMemo` is false, then per request).
 *
 * @example
 * ```ts
 * const ctx = authContextFromRequest(req);
 * await enforcer.enforce(plan, ctx);
 * ```
 */
export function authContextFromRequest(
  req: Request,
  clientIdOf: (req: Request) => string = connectionClientId,
  perConnectionMemo = true,
): AuthContext {
  const memo = perConnectionMemo ? connectionMemo(req) : new Map<unknown, unknown>();
  return new HttpAuthContext(bearerCredential(req.headers.authorization) ?? undefined, memo, req, clientIdOf);
}
