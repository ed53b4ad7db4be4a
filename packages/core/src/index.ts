/**
 * @portcullis/core — configuration, key guard, token issuers and validator,
 * password hasher, sessions, shields and the gate dispatcher. Transport
 * adapters live in their own packages and only translate.
 */
export { loadConfig, type ConfigSources } from './config/load-config.js';
export { CAPTCHA_VERIFY_URLS, type CaptchaProvider, type PortcullisConfig, type SecurityConfig } from './config/portcullis-config.js';
export { ConfigError, PortcullisError, TokenError, type PortcullisErrorCode, type TokenFailureReason } from './errors/portcullis-error.js';
export { DEVELOPMENT_KEY, decodeBase64Key, resolveSigningKey, type SigningKey } from './key/key-guard.js';
export { Secret } from './key/secret.js';
export { consoleLoggerFactory, silentLoggerFactory, type Logger, type LoggerFactory } from './logging/logger.js';
export type { AuthContext, ShieldResult, Transport } from './contracts/auth-context.js';
export type { Principal } from './contracts/principal.js';
export type { IShieldAuth, ShieldAuth } from './contracts/shield-auth.js';
export { SESSION_TOKEN_SUFFIX, type RefreshResult, type RevocationEvent, type RevocationSubscribe, type UpgradeResult } from './contracts/sessions.js';
export type { JwtClaims, JwtTokenType, LoginTokenPair, TokenValidationResult, TokenValidator } from './contracts/tokens.js';
export { LOGGER_FACTORY, PORTCULLIS_CONFIG, SIGNING_KEY } from './di/tokens.js';
