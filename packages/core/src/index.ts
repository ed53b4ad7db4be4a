/**
 * @portcullis/core — configuration, key guard, token issuers and validator,
 * password hasher, sessions, shields and the gate dispatcher. Transport
 * adapters live in their own packages and only translate.
 */
import 'reflect-metadata';
export { loadConfig, type ConfigSources } from './config/load-config.js';
export { CAPTCHA_VERIFY_URLS, type CaptchaProvider, type PortcullisConfig, type SecurityConfig } from './config/portcullis-config.js';
export { ConfigError, PortcullisError, TokenError } from './errors/portcullis-error.js';
export type { PortcullisErrorCode, TokenFailureReason } from './errors/error-codes.js';
export { describeError, type ErrorLogFields } from './errors/describe-error.js';
export { DEVELOPMENT_KEY, decodeBase64Key, resolveSigningKey, type SigningKey } from './key/key-guard.js';
export { Secret } from './key/secret.js';
export { consoleLoggerFactory, silentLoggerFactory, type Logger, type LoggerFactory } from './logging/logger.js';
export type { AuthContext, ShieldResult, Transport } from './contracts/auth-context.js';
export type { Principal } from './contracts/principal.js';
export type { IShieldAuth, ShieldAuth } from './contracts/shield-auth.js';
export type { RefreshResult, RevocationEvent, RevocationSubscribe, UpgradeResult } from './contracts/sessions.js';
export type { JwtClaims, JwtTokenType, LoginTokenPair, TokenValidationResult, TokenValidator } from './contracts/tokens.js';
export { LOGGER_FACTORY, PORTCULLIS_CONFIG, SIGNING_KEY } from './di/tokens.js';
export { AccessTokenIssuer, type IAccessTokenIssuer, type IssuedAccessToken } from './jwt/access-token-issuer.js';
export { JwtTokenIssuer, type IssuedLoginPair } from './jwt/jwt-token-issuer.js';
export { JwtTokenValidator } from './jwt/jwt-token-validator.js';
export { ClaimTypes, INBOUND_CLAIM_MAP, mapInboundClaims, principalFromClaims, principalId, principalName } from './jwt/claims.js';
export { ACCESS_TOKEN_TYP, REFRESH_TOKEN_TYP } from './jwt/jwt-signer.js';
export { PasswordHasher } from './password/password-hasher.js';
export { BcryptLimiter, defaultBcryptConcurrency } from './password/bcrypt-limiter.js';
export { assertPassword, bcryptInput, type PasswordPrehash } from './password/password-input.js';
export { normaliseBcryptHash } from './password/bcrypt-hash-format.js';
export type { ClassOrMethodDecorator } from './shield/decorator-target.js';
export { Shield, type ShieldClass } from './shield/shield.decorator.js';
export { JwtShield } from './shield/jwt-shield.decorator.js';
export { SessionShield } from './shield/session-shield.decorator.js';
export { Authorize, type AuthorizeOptions, type AuthorizeRequirement } from './shield/authorize.decorator.js';
export { readShieldPlan, type ShieldPlan } from './shield/shield-plan-reader.js';
export { PORTCULLIS_CONTAINER } from './shield/container-token.js';
export { ShieldEnforcer, REFUSALS, type EnforceResult, type RefusalCode } from './shield/shield-enforcer.js';
export { JwtAuth, type VerifiedJwt } from './shield/jwt-auth.js';
export { SessionAuth } from './shield/session-auth.js';
export { SessionOrJwtAuth } from './shield/session-or-jwt-auth.js';
export { bearerCredential } from './shield/bearer-credential.js';
export { Portal } from './realtime/portal.decorator.js';
export { Gate } from './realtime/gate.decorator.js';
export { readPortalPlan, type GateRoute, type PortalPlan } from './realtime/portal-reader.js';
export type { ConnectionContext, GateContext, GateHandler } from './realtime/connection-context.js';
export type { AuthReply, GateReply, GateRequest, WireError, WireErrorCode } from '@portcullis/protocol';
export { authReply } from './realtime/auth-frame.js';
export { ConnectionAuthenticator, type ConnectionAuthResult } from './realtime/connection-authenticator.js';
export { GateDispatcher, type PortalClass } from './realtime/gate-dispatcher.js';
export { ReplySequencer, type PendingReply, type ReplySequencerOptions } from './realtime/reply-sequencer.js';
export {
  DEFAULT_MAX_BUFFERED_BYTES,
  DEFAULT_MAX_PENDING_REQUESTS,
  nonNegativeInteger,
  positiveInteger,
  resolveConnectionTransportOptions,
  type ConnectionTransportOptions,
  type ResolvedConnectionTransportOptions,
} from './realtime/transport-options.js';
export { ConnectionProtocol } from './realtime/connection-protocol.js';
export type { ConnectionProtocolOptions, HandshakeMode, ProtocolCloseReason } from './realtime/connection-protocol-options.js';
export {
  ConnectionRegistry,
  type ConnectionCloseCode,
  type ConnectionCredential,
  type ConnectionInit,
  type LiveConnection,
  type RevocationSource,
} from './realtime/connection-registry.js';
export { TokenSessionSync } from './session/token-session-sync.js';
export { registerSessionServices } from './session/register-session-services.js';
export { newSessionToken } from './session/session-token.js';
export { SessionNearCache } from './session/session-near-cache.js';
export { createSessionStores, SessionStores, type SessionStoreOptions } from './store/session-stores.js';
export { LockoutStore, normalizeAccountKey, type LockoutStatus } from './store/lockout-store.js';
export { storeUnavailable, type CacheNamespace, type CacheRef, type CacheStore, type CacheWrite } from './store/cache-store.js';
export { MemoryCacheStore, type MemoryCacheStoreOptions } from './store/memory-cache-store.js';
export { RedisCacheStore, type RedisCacheStoreOptions } from './store/redis-cache-store.js';
export { LocalRevocationBus, type RevocationBus } from './store/revocation-bus.js';
export { RedisRevocationBus } from './store/redis-revocation-bus.js';
export { ACCOUNT_STORE, type Account, type AccountStore, type NewAccount } from './account/account-store.js';
export { InMemoryAccountStore } from './account/in-memory-account-store.js';
export { RedisAccountStore, type RedisAccountStoreOptions } from './account/redis-account-store.js';
export { LoginService, type LoginOrigin, type PasswordLogin, type SignupRequest } from './account/login-service.js';
export { LockedOutError } from './account/login-errors.js';
export { USERNAME_PATTERN } from './account/account-input.js';
export { registerAccountServices } from './account/register-account-services.js';
export { CAPTCHA_VERIFIER, type CaptchaVerifier } from './captcha/captcha-verifier.js';
export { SiteverifyCaptchaVerifier, type SiteverifyOptions } from './captcha/siteverify-captcha-verifier.js';
export { I_ACCESS_TOKEN_ISSUER, registerPortcullis, type PortcullisRegistration, type PortcullisRegistrationOptions } from './di/register-portcullis.js';
