/**
 * @portcullis/client/node — everything of the isomorphic entry, plus the TCP
 * and UDP transports, which need `node:net` and `node:dgram`. Their framing is
 * `@portcullis/protocol`'s, the same code the server runs.
 */
export {
  AuthApi, backoffDelay, DEFAULT_BACKOFF, isPortcullisClientError, isServerErrorCode, parseLoginResponse, parseRefreshResponse,
  parseUpgradeResponse, PortcullisClient, PortcullisClientError, RealtimeConnection, webSocketTransport,
  type BackoffOptions, type ConnectionEvents, type ConnectionState, type ConnectOptions, type CredentialKind, type CredentialSource,
  type FetchLike, type HeldTokens, type InboundFrame, type LinkClosed, type LinkRequest, type LinkSink, type LoginOptions, type LoginTokens,
  type PortcullisClientErrorCode, type PortcullisClientErrorDetails, type PortcullisClientOptions, type PortcullisLocalErrorCode,
  type PortcullisServerErrorCode, type RealtimeConnectionOptions, type RealtimeLink, type RealtimeTransport, type RefreshResult,
  type RequestFrame, type RequestOptions, type SessionTokens, type SignupInput, type WebSocketConstructor, type WebSocketLike,
  type WebSocketTransportOptions,
} from './index.js';
export { tcpTransport, type TcpTransportOptions } from './node/tcp-transport.js';
export { udpTransport, type UdpTransportOptions } from './node/udp-transport.js';
