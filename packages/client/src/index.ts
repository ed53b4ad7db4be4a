/**
 * @portcullis/client — the isomorphic client (browsers and Node): signup, login,
 * refresh, upgrade and logout over HTTP, and real-time connections over
 * WebSocket. Node-only transports (TCP, UDP) are in `@portcullis/client/node`.
 * This entry has no static bare imports, so browsers load it without a bundler.
 */
export { PortcullisClient, type ConnectOptions, type PortcullisClientOptions } from './client/portcullis-client.js';
export {
  isPortcullisClientError, isServerErrorCode, PortcullisClientError,
  type PortcullisClientErrorCode, type PortcullisClientErrorDetails, type PortcullisLocalErrorCode, type PortcullisServerErrorCode,
} from './errors/portcullis-client-error.js';
export { AuthApi, type FetchLike, type LoginOptions, type SignupInput } from './http/auth-api.js';
export { parseLoginResponse, parseRefreshResponse, parseUpgradeResponse, type LoginTokens, type RefreshResult, type SessionTokens } from './http/auth-responses.js';
export { backoffDelay, DEFAULT_BACKOFF, type BackoffOptions } from './realtime/backoff.js';
export type {
  ConnectionEvents, ConnectionState, CredentialKind, CredentialSource, RealtimeConnectionOptions, RequestOptions,
} from './realtime/connection-types.js';
export { RealtimeConnection } from './realtime/realtime-connection.js';
export type { InboundFrame, LinkClosed, LinkRequest, LinkSink, RealtimeLink, RealtimeTransport, RequestFrame } from './realtime/realtime-transport.js';
export { webSocketTransport, type WebSocketConstructor, type WebSocketLike, type WebSocketTransportOptions } from './realtime/web-socket-transport.js';
export type { HeldTokens } from './tokens/token-keeper.js';
