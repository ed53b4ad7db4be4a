import type { Secret } from './secret.js';

/**
 * Captcha providers portcullis can verify against.
 *
 * @example
 * ```ts
 * const provider: CaptchaProvider | undefined = config.security.captcha.provider;
 * ```
 */
export type CaptchaProvider = 'recaptcha' | 'hcaptcha' | 'turnstile';

/**
 * What guards a gate or route that declares no shield (`svc:security:shields:fallback`):
 * `none` answers anyone, `jwt` needs a JWT access token, `session` a session token,
 * `any` either. `@AllowAnonymous` opts a gate or route out.
 *
 * @example
 * ```ts
 * const fallback: ShieldFallback = config.security.shields.fallback; // 'none' unless configured
 * ```
 */
export type ShieldFallback = 'none' | 'jwt' | 'session' | 'any';

/**
 * The validated `svc:security` section. Frozen; read once at start-up.
 *
 * @example
 * ```ts
 * const { security } = loadConfig();
 * security.accessTokenMinutes; // 15 unless configured
 * ```
 */
export interface SecurityConfig {
  /** `jwt` enables JwtAuth, the validator and both issuers. */
  readonly mode: 'jwt' | undefined;
  /** base64 text of the HMAC key, wrapped so it never prints; undefined when unset. */
  readonly key: Secret | undefined;
  readonly minKeyBytes: number;
  readonly accessTokenMinutes: number;
  readonly refreshTokenDays: number;
  readonly issuer: string;
  readonly audience: string;
  readonly clockSkewSeconds: number;
  readonly jwt: {
    readonly mapInboundClaims: boolean;
    readonly nameClaim: string;
  };
  readonly password: {
    readonly workFactor: number;
    readonly prehash: 'none' | 'sha384';
    readonly minLength: number;
    readonly maxLength: number;
  };
  readonly lockout: {
    readonly store: 'memory' | 'backplane';
    readonly maxFailures: number;
    readonly windowMinutes: number;
    readonly lockMinutes: number;
  };
  readonly captcha: {
    readonly provider: CaptchaProvider | undefined;
    readonly siteKey: string;
    readonly secretKey: Secret;
    /** The provider's verify endpoint unless overridden (tests, self-hosting). */
    readonly verifyUrl: string;
  };
  readonly shields: {
    readonly fallback: ShieldFallback;
  };
  readonly session: {
    readonly accessMinutes: number;
    readonly refreshDays: number;
    /** Bounded staleness of the per-process session cache; 0 disables it. */
    readonly nearCacheSeconds: number;
    /** With Redis: how long a "not invalidated" JWT verdict is trusted per process; 0 (default) asks Redis on every check. */
    readonly jwtNearCacheSeconds: number;
  };
}

/**
 * Everything portcullis reads from configuration, validated and frozen.
 *
 * @example
 * ```ts
 * const config = loadConfig({ env: { SVC__SECURITY__MODE: 'jwt' } });
 * config.persistence.cache.provider; // 'inmemory'
 * ```
 */
export interface PortcullisConfig {
  /** True when the source had an `svc:security` section at all. */
  readonly hasSecuritySection: boolean;
  readonly production: boolean;
  readonly security: SecurityConfig;
  readonly persistence: {
    readonly cache: {
      readonly provider: 'inmemory' | 'redis';
      readonly url: string;
    };
  };
  readonly errors: {
    readonly format: 'simple' | undefined;
  };
}

/**
 * Each provider's public verify endpoint.
 *
 * @example
 * ```ts
 * CAPTCHA_VERIFY_URLS.hcaptcha; // 'https://api.hcaptcha.com/siteverify'
 * ```
 */
export const CAPTCHA_VERIFY_URLS: Readonly<Record<CaptchaProvider, string>> = Object.freeze({
  recaptcha: 'https://www.google.com/recaptcha/api/siteverify',
  hcaptcha: 'https://api.hcaptcha.com/siteverify',
  turnstile: 'https://challenges.cloudflare.com/turnstile/v0/siteverify',
});
