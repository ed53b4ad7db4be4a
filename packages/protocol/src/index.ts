/**
 * @portcullis/protocol — the wire contract of portcullis, written once and used
 * by the server (core and the ws, tcp and udp transports) and the client alike:
 * real-time frames, error and close codes, the session-token shape, the HTTP
 * credential bodies, the length-prefixed frame codec and the layout of
 * authenticated UDP datagrams with their replay window. No dependencies and no
 * Node built-ins: it loads unchanged in browsers.
 */
export { ERROR_CODES, isErrorCode, isWireErrorCode, WIRE_ERROR_MESSAGES, type ErrorCode, type WireErrorCode } from './error-codes.js';
export { WS_CLOSE, type CloseReason } from './close-codes.js';
export { encodeReply, errorReply, frameKind, wireError, type FrameKind, type GateReply, type GateRequest, type PushFrame, type WireError } from './frames.js';
export { readAuthFrame, readAuthReply, type AuthFrame, type AuthReply } from './auth-frame.js';
export { readRefreshFrame, readRefreshReply, type RefreshFrame, type RefreshReply } from './refresh-frame.js';
export { isSessionToken, SESSION_TOKEN_LENGTH, SESSION_TOKEN_SUFFIX } from './session-token.js';
export { credentialKind, isJwtShape, MAX_TOKEN_LENGTH, type CredentialKind } from './credential.js';
export { parseJsonFrame } from './json-frame.js';
export { DEFAULT_MAX_FRAME_BYTES, encodeFrame, FRAME_HEADER_BYTES, FrameDecoder, FrameTooLargeError } from './frame-codec.js';
export {
  readLoginResponse, readSessionsResponse, readUpgradeResponse, refreshResponseKind, type ErrorBody, type LoginResponse, type SessionsResponse,
  type SessionSummary, type UpgradeResponse,
} from './http-bodies.js';
export {
  isUdpDatagram, layUdpDatagram, readUdpDatagram, UDP_DATAGRAM_VERSION, UDP_HEADER_BYTES, UDP_MAC_BYTES, UDP_MIN_DATAGRAM_BYTES,
  UDP_SEQ_BYTES, UDP_SID_BYTES, type UdpDatagramParts,
} from './udp-datagram.js';
export { UdpMacKey } from './udp-mac-key.js';
export { UDP_REPLAY_WINDOW, UdpReplayWindow } from './udp-replay-window.js';
