/**
 * @portcullis/core — what an application uses: configuration and the key guard,
 * the token issuers and validator, the password hasher, sessions and their
 * stores, accounts and lockout, the shield and real-time decorators, the shield
 * enforcer, the gate dispatcher, the connection registry, and `registerPortcullis`
 * to wire them into a tsyringe container.
 *
 * Adapter authors also import `@portcullis/core/transport`; tests import
 * `@portcullis/core/testing`. The wire contract itself is `@portcullis/protocol`.
 */
import 'reflect-metadata';

// configuration and keys
export { loadConfig, type ConfigSources } from './config/load-config.js';
export type { PortcullisConfig, ShieldFallback } from './contracts/portcullis-config.js';
export { Secret } from './contracts/secret.js';
export type { SigningKey } from './contracts/signing-key.js';
export { resolveSigningKey } from './key/key-guard.js';
export { UdpKeyring, udpSessionId } from './key/udp-keyring.js';
export { keyId, keyIdOf } from './key/key-id.js';
export type { JsonWebKeySet, PublicJwk } from './jwt/jwks.js';

// errors and logging
export { ConfigError, OverloadedError, PortcullisError, TokenError } from './errors/portcullis-error.js';
export type { PortcullisErrorCode, RefusalCode, TokenFailureReason } from './errors/error-codes.js';
export { describeError } from './errors/describe-error.js';
export type { Logger, LoggerFactory } from './contracts/logger.js';
export { consoleLoggerFactory, silentLoggerFactory } from './logging/logger.js';

// wiring
export { LOGGER_FACTORY, PORTCULLIS_CONFIG, PORTCULLIS_CONTAINER, SIGNING_KEY } from './contracts/injection-tokens.js';
export { registerPortcullis, type PortcullisRegistration, type PortcullisRegistrationOptions } from './composition/register-portcullis.js';
export { registerSessionServices } from './composition/register-session-services.js';
export { registerAccountServices } from './composition/register-account-services.js';

// tokens
export type { JwtClaims, TokenValidationResult } from './contracts/tokens.js';
export { AccessTokenIssuer, I_ACCESS_TOKEN_ISSUER, type IAccessTokenIssuer, type IssuedAccessToken } from './jwt/access-token-issuer.js';
export { JwtTokenIssuer } from './jwt/jwt-token-issuer.js';
export { JwtTokenValidator } from './jwt/jwt-token-validator.js';

// passwords
export { PasswordHasher } from './password/password-hasher.js';
export { BcryptLimiter } from './password/bcrypt-limiter.js';

// sessions and stores
export type {
  CredentialsRevoked, FleetPush, PushListener, RefreshResult, RevocationEvent, RevocationGap, SessionSuccessor, UpgradeResult,
} from './contracts/sessions.js';
export { TokenSessionSync, type LoginCaller } from './session/token-session-sync.js';
export { sessionKey } from './session/session-token.js';
export type { LoginOrigin } from './session/login-inventory.js';
export { upgradeResponse } from './realtime/in-band-credentials.js';
export { createSessionStores, SessionStores, type SessionStoreOptions } from './store/session-stores.js';
export { LockoutStore, type AttemptClaim, type LockoutStatus } from './store/lockout-store.js';

// accounts and captcha
export { ACCOUNT_STORE, type Account, type AccountStore, type NewAccount } from './account/account-store.js';
export { LoginService } from './account/login-service.js';
export { LockedOutError } from './account/login-errors.js';
export { CAPTCHA_VERIFIER, type CaptchaVerifier } from './captcha/captcha-verifier.js';

// shields
export type { AcceptedCredential, AuthContext, ShieldResult, Transport } from './contracts/auth-context.js';
export type { Principal } from './contracts/principal.js';
export type { IShieldAuth, ShieldAuth } from './contracts/shield-auth.js';
export { Shield, type ShieldClass } from './shield/shield.decorator.js';
export { JwtShield } from './shield/jwt-shield.decorator.js';
export { SessionShield } from './shield/session-shield.decorator.js';
export { Authorize, type AuthorizeOptions } from './shield/authorize.decorator.js';
export { AllowAnonymous } from './shield/allow-anonymous.decorator.js';
export { NeverShed } from './shield/never-shed.decorator.js';
export { RateLimit, type RateLimitKey, type RateLimitOptions, type RateLimitRule } from './shield/rate-limit.decorator.js';
export { ShieldEnforcer } from './shield/shield-enforcer.js';
export { JwtAuth } from './shield/jwt-auth.js';
export { SessionAuth } from './shield/session-auth.js';
export { SessionOrJwtAuth } from './shield/session-or-jwt-auth.js';

// real time
export { Portal } from './realtime/portal.decorator.js';
export { Gate } from './realtime/gate.decorator.js';
export type { GateContext } from './realtime/connection-context.js';
export { GateDispatcher, type PortalClass } from './realtime/gate-dispatcher.js';
export { ConnectionRegistry, MAX_PUSH_FRAME_BYTES } from './realtime/connection-registry.js';
