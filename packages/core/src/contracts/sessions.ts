import type { Principal } from './principal.js';
import type { LoginTokenPair } from './tokens.js';

/**
 * The upgrade response, with the expirations as dates.
 *
 * @example
 * ```ts
 * const { accessToken, accessExpiration }: UpgradeResult = await sessions.upgrade(jwt);
 * ```
 */
export interface UpgradeResult {
  readonly accessToken: string;
  readonly refreshToken: string;
  readonly accessExpiration: Date;
  readonly refreshExpiration: Date;
  /**
   * The session's UDP key, 32 bytes as base64url: the MAC key of its authenticated
   * UDP datagrams (derived by `UdpKeyring`; a refresh gives a new one). Absent on a
   * verify-only server, which holds no secret to derive it from.
   */
  readonly udpKey?: string;
  /** The principal the session acts for. */
  readonly principal: Principal;
}

/**
 * What `refresh` gave back: a new login pair (JWT refresh) or a new session pair.
 *
 * @example
 * ```ts
 * const result = await sessions.refresh(refreshToken);
 * return result.kind === 'login' ? result.pair.accessToken : result.session.accessToken;
 * ```
 */
export type RefreshResult =
  | { readonly kind: 'login'; readonly pair: LoginTokenPair }
  | { readonly kind: 'session'; readonly session: UpgradeResult };

/**
 * Credentials that stopped working, in this process and (with Redis) on every server
 * sharing the cache. A family revocation may emit two: its JWTs, then its sessions.
 * Connections holding any of these close.
 *
 * @example
 * ```ts
 * const event: CredentialsRevoked = { kind: 'revoked', sessionKeys: [sessionKey(token)], jtis: [] };
 * ```
 */
export interface CredentialsRevoked {
  readonly kind: 'revoked';
  /** Session access tokens that stopped working, each as its `sessionKey` (SHA-256 digest): no event carries a token. */
  readonly sessionKeys: readonly string[];
  /** `jti`s of JWTs that stopped working (upgrade, logout with a JWT, family revocation): one event per upgrade. */
  readonly jtis: readonly string[];
  /** Login family ids revoked (logout with a JWT, refresh-token reuse): every JWT of those logins stopped working. */
  readonly families?: readonly string[];
  /** Set when every credential of a principal was revoked. */
  readonly principalId?: string;
  /**
   * Session access tokens a refresh replaced: `from` is the old token's key (also in
   * `sessionKeys`), `sealed` the new access token sealed under the old one. A connection
   * holding the old token opens it and goes on with its successor instead of closing.
   */
  readonly successors?: readonly SessionSuccessor[];
}

/**
 * A session access token and the one a refresh replaced it with. The new token is sealed
 * under the old one (a pad and a tag derived from it; an older release used AES-256-GCM), so
 * only a holder of the old token (a server with connections on it) can read it; the event never
 * carries a token in the clear.
 *
 * @example
 * ```ts
 * const moved: SessionSuccessor = { from: sessionKey(oldAccessToken), sealed };
 * ```
 */
export interface SessionSuccessor {
  /** `sessionKey` of the replaced access token. */
  readonly from: string;
  /** The new access token sealed under the replaced one (base64url: nonce, sealed UUID, tag). */
  readonly sealed: string;
}

/**
 * Revocation events may have been missed (the fleet channel dropped or came back):
 * nothing cached about a credential may be trusted until it is checked again.
 *
 * @example
 * ```ts
 * if (event.kind === 'gap') memo.clear();
 * ```
 */
export interface RevocationGap {
  readonly kind: 'gap';
}

/**
 * What revocation listeners hear: credentials revoked, or a gap.
 *
 * @example
 * ```ts
 * sessions.onRevocation((event: RevocationEvent) => {
 *   if (event.kind === 'gap') return resync();
 *   event.sessionKeys.forEach(closeSocketsHoldingKey);
 * });
 * ```
 */
export type RevocationEvent = CredentialsRevoked | RevocationGap;

/**
 * Subscribes to revocations; returns the unsubscribe function.
 *
 * @example
 * ```ts
 * const subscribe: RevocationSubscribe = sessions.onRevocation;
 * const off = subscribe((event) => audit.log(event.principalId));
 * off();
 * ```
 */
export type RevocationSubscribe = (listener: (event: RevocationEvent) => void) => () => void;

/**
 * Receives a push another server published: the principal and the frame, parsed from JSON.
 *
 * @example
 * ```ts
 * const listener: PushListener = (principalId, frame) => console.log(principalId, frame);
 * ```
 */
export type PushListener = (principalId: string, frame: unknown) => void;

/**
 * How `ConnectionRegistry.sendToPrincipal` reaches the other servers of a fleet: over the
 * Redis revocation channel, or nowhere in memory. At most once, never retried.
 *
 * @example
 * ```ts
 * const fleet: FleetPush = sessions.fleetPush;
 * const off = fleet.subscribe((principalId, frame) => console.log(principalId, frame));
 * await fleet.publish('player-42', JSON.stringify({ type: 'event', data: 'match found' }));
 * ```
 */
export interface FleetPush {
  /** Sends the frame (JSON text) to the other servers; never rejects (a failed publish is logged). */
  publish(principalId: string, frameJson: string): Promise<void>;
  /** Listens for pushes published by other servers; returns the unsubscribe function. */
  subscribe(listener: PushListener): () => void;
}
