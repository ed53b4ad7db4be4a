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
  /** base64 HMAC keys that still verify (HS256) but never sign; empty by default. */
  readonly previousKeys: readonly Secret[];
  /** PKCS#8 PEM Ed25519 private key tokens are signed with (EdDSA). */
  readonly signingKey: Secret | undefined;
  /** SPKI PEM Ed25519 public keys that still verify (EdDSA); empty by default. */
  readonly previousPublicKeys: readonly string[];
  /** SPKI PEM Ed25519 public key a verify-only server checks tokens without `kid` against. */
  readonly publicKey: string | undefined;
  readonly minKeyBytes: number;
  readonly accessTokenMinutes: number;
  readonly refreshTokenDays: number;
  readonly issuer: string;
  readonly audience: string;
  readonly clockSkewSeconds: number;
  /** Seconds after a refresh token's first use in which presenting it again answers the same successor; 0: every reuse is theft. */
  readonly refreshReuseGraceSeconds: number;
  readonly jwt: {
    /** The one algorithm tokens are signed and verified with. */
    readonly algorithm: 'HS256' | 'EdDSA';
    /** EdDSA only: this server holds public keys alone and can mint no token. */
    readonly verifyOnly: boolean;
    readonly mapInboundClaims: boolean;
    readonly nameClaim: string;
  };
  readonly password: {
    readonly workFactor: number;
    readonly prehash: 'none' | 'sha384';
    readonly minLength: number;
    readonly maxLength: number;
    /** A login or signup that would wait longer than this for bcrypt is refused at once with `overloaded`; 0 never refuses. */
    readonly maxWaitSeconds: number;
  };
  readonly lockout: {
    readonly store: 'memory' | 'backplane';
    readonly maxFailures: number;
    /** Failed logins and refused signups one client address may make per window; 0 turns the limit off. */
    readonly ipMaxFailures: number;
    readonly windowMinutes: number;
    readonly lockMinutes: number;
  };
  readonly captcha: {
    readonly provider: CaptchaProvider | undefined;
    readonly siteKey: string;
    readonly secretKey: Secret;
    /** The provider's verify endpoint unless overridden (tests, self-hosting). */
    readonly verifyUrl: string;
    /** When set, the provider's `hostname` must equal it (lower-cased); '' checks nothing. */
    readonly expectedHostname: string;
    /** When set, the provider's `action` must equal it; '' checks nothing. */
    readonly expectedAction: string;
    /** When set, the provider's `score` must be a number at least this (0.0–1.0). */
    readonly minScore: number | undefined;
  };
  readonly shields: {
    readonly fallback: ShieldFallback;
  };
  readonly session: {
    readonly accessMinutes: number;
    readonly refreshDays: number;
    /** Live session pairs one principal may hold; a new pair beyond it revokes the oldest. */
    readonly maxPerPrincipal: number;
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
  /**
   * Where the settings were read from, for start-up messages: the config file's
   * path, or which files were looked for in which directory (`SVC__…` variables
   * apply on top either way).
   */
  readonly source: string;
  /** True when the source had an `svc:security` section at all. */
  readonly hasSecuritySection: boolean;
  readonly production: boolean;
  readonly security: SecurityConfig;
  readonly persistence: {
    readonly cache: {
      readonly provider: 'inmemory' | 'redis';
      /** With `single`, the server; with `cluster` or `sentinel`, only its user, password and scheme are used. */
      readonly url: string;
      /** `single` (one server, or a proxy), `cluster` (Redis Cluster) or `sentinel` (a primary found through Sentinel). */
      readonly topology: 'single' | 'cluster' | 'sentinel';
      /** Cluster seed nodes, or the sentinels; empty with `single`. */
      readonly nodes: readonly { readonly host: string; readonly port: number }[];
      /** The name the sentinels monitor the primary under. */
      readonly sentinelMaster: string;
    };
    /**
     * Where accounts live: `cache` keeps them in the cache provider's store (memory or
     * Redis), `postgres` in a PostgreSQL table. `url` is empty unless the provider is `postgres`.
     */
    readonly accounts: {
      readonly provider: 'cache' | 'postgres';
      readonly url: Secret;
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
