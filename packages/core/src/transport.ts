/**
 * @portcullis/core/transport — what an adapter author needs beyond the
 * application surface of `@portcullis/core`: reading a credential and a shield
 * plan, the enforcer's verdict, a connection's admission on `CONNECTION_PLAN`,
 * the transport-neutral `ConnectionProtocol` with its reply ordering, what the
 * `ConnectionRegistry` tracks, and the shared transport options. The ws, tcp,
 * udp and express packages are built on it; an application does not need it.
 */

// credentials and shield plans
export { bearerCredential, bearerCredentialOf, severalAuthorizations } from './shield/bearer-credential.js';
export { readShieldPlan, shieldPlan, type PlannedRateLimit, type ShieldPlan } from './shield/shield-plan-reader.js';
export type { EnforceResult } from './contracts/refusals.js';

// authenticated UDP datagrams
export { udpMac, udpMacMatches } from './key/udp-keyring.js';

// start-up: building a controller, portal or shield, with errors a person can act on
export { resolveAtStartup } from './config/startup-diagnosis.js';

// what signup accepts as an email and a username (the /auth controller checks them before its onSignup hook)
export { checkEmail, checkUsername } from './account/account-input.js';

// a connection's credential
export { CONNECTION_PLAN, closeReasonOf, type Admission, type Admitted } from './realtime/connection-plan.js';
export { authReply } from './realtime/auth-frame.js';
export type { ConnectionContext } from './realtime/connection-context.js';

// the connection protocol
export { ConnectionProtocol } from './realtime/connection-protocol.js';
export type { ConnectionProtocolOptions, HandshakeMode, ProtocolCloseReason } from './realtime/connection-protocol-options.js';
export { ReplySequencer, type PendingReply, type ReplySequencerOptions } from './realtime/reply-sequencer.js';
export { AuthWaitingRoom, type AuthTicket } from './realtime/auth-waiting-room.js';

// what the connection registry tracks
export type { ConnectionCloseCode, ConnectionInit, LiveConnection, RevocationSource } from './realtime/connection-registry.js';
export type { RevocationSubscribe } from './contracts/sessions.js';

// refusing requests unrun while the event loop is behind
export { LoadShedder } from './runtime/load-shedder.js';

// transport options
export {
  DEFAULT_ANONYMOUS_IDLE_TIMEOUT_MS,
  DEFAULT_AUTH_TIMEOUT_MS,
  DEFAULT_MAX_AWAITING_AUTH_PER_ADDRESS,
  DEFAULT_MAX_BUFFERED_BYTES,
  DEFAULT_MAX_PENDING_REQUESTS,
  nonNegativeInteger,
  positiveInteger,
  resolveConnectionTransportOptions,
  type ConnectionTransportOptions,
  type ResolvedConnectionTransportOptions,
} from './realtime/transport-options.js';
