/**
 * @portcullis/core — configuration, key guard, token issuers and validator,
 * password hasher, sessions, shields and the gate dispatcher. Transport
 * adapters live in their own packages and only translate.
 */
import 'reflect-metadata';
export { loadConfig, type ConfigSources } from './config/load-config.js';
export { CAPTCHA_VERIFY_URLS, type CaptchaProvider, type PortcullisConfig, type SecurityConfig } from './contracts/portcullis-config.js';
export { ConfigError, PortcullisError, TokenError } from './errors/portcullis-error.js';
export type { PortcullisErrorCode, TokenFailureReason } from './errors/error-codes.js';
export { describeError, type ErrorLogFields } from './errors/describe-error.js';
export type { SigningKey } from './contracts/signing-key.js';
export { DEVELOPMENT_KEY, decodeBase64Key, resolveSigningKey } from './key/key-guard.js';
export { Secret } from './contracts/secret.js';
export type { Logger, LoggerFactory } from './contracts/logger.js';
export { consoleLoggerFactory, silentLoggerFactory } from './logging/logger.js';
export type { AcceptedCredential, AuthContext, ShieldResult, Transport } from './contracts/auth-context.js';
export type { Principal } from './contracts/principal.js';
export type { IShieldAuth, ShieldAuth } from './contracts/shield-auth.js';
export type { CredentialsRevoked, RefreshResult, RevocationEvent, RevocationGap, RevocationSubscribe, UpgradeResult } from './contracts/sessions.js';
export type { JwtClaims, JwtTokenType, LoginTokenPair, TokenValidationResult, TokenValidator } from './contracts/tokens.js';
export { LOGGER_FACTORY, PORTCULLIS_CONFIG, SIGNING_KEY } from './contracts/injection-tokens.js';
export { AccessTokenIssuer, I_ACCESS_TOKEN_ISSUER, type IAccessTokenIssuer, type IssuedAccessToken } from './jwt/access-token-issuer.js';
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
export { readShieldPlan, shieldPlan, type ShieldPlan } from './shield/shield-plan-reader.js';
export { PORTCULLIS_CONTAINER } from './contracts/injection-tokens.js';
export { REFUSALS, type EnforceResult, type RefusalCode } from './contracts/refusals.js';
export { ShieldEnforcer } from './shield/shield-enforcer.js';
export { JwtAuth } from './shield/jwt-auth.js';
export { SessionAuth } from './shield/session-auth.js';
export { SessionOrJwtAuth } from './shield/session-or-jwt-auth.js';
export { bearerCredential } from './shield/bearer-credential.js';
export { Portal } from './realtime/portal.decorator.js';
export { Gate } from './realtime/gate.decorator.js';
export { readPortalPlan, type GateRoute, type PortalPlan } from './realtime/portal-reader.js';
export type { ConnectionContext, GateContext, GateHandler } from './realtime/connection-context.js';
export type { AuthReply, GateReply, GateRequest, WireError, WireErrorCode } from '@portcullis/protocol';
export { authReply } from './realtime/auth-frame.js';
export { CONNECTION_PLAN, type Admission, type Admitted } from './realtime/connection-plan.js';
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
  type ConnectionInit,
  type LiveConnection,
  type RevocationSource,
} from './realtime/connection-registry.js';
export { TokenSessionSync } from './session/token-session-sync.js';
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
export { CAPTCHA_VERIFIER, type CaptchaVerifier } from './captcha/captcha-verifier.js';
export { SiteverifyCaptchaVerifier, type SiteverifyOptions } from './captcha/siteverify-captcha-verifier.js';
export { registerPortcullis, type PortcullisRegistration, type PortcullisRegistrationOptions } from './composition/register-portcullis.js';
export { registerSessionServices } from './composition/register-session-services.js';
export { registerAccountServices } from './composition/register-account-services.js';
