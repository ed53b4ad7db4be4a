/**
 * One verifier for reCAPTCHA, hCaptcha and Cloudflare Turnstile, which share the
 * `siteverify` protocol.
 */
import 'reflect-metadata';
import { inject, injectable } from 'tsyringe';
import { PORTCULLIS_CONFIG } from '../contracts/injection-tokens.js';
import type { PortcullisConfig } from '../contracts/portcullis-config.js';
import type { CaptchaVerifier } from './captcha-verifier.js';

/**
 * Options of {@link SiteverifyCaptchaVerifier}.
 *
 * @example
 * ```ts
 * const captcha = SiteverifyCaptchaVerifier.create(config, { timeoutMs: 2000 } satisfies SiteverifyOptions);
 * ```
 */
export interface SiteverifyOptions {
  /** Longest wait for the provider; past it the token is refused. Default 5000 ms. */
  readonly timeoutMs?: number;
}

/** Provider tokens are at most a few KiB; anything longer is refused unsent. */
const MAX_TOKEN_LENGTH = 8192;

/**
 * Verifies captcha tokens against `captcha:verify-url` (the provider's public
 * endpoint unless overridden): a form-encoded POST of `secret`, `response` and
 * `remoteip`, answered `{"success": true|false, "hostname", "action", "score", ...}`.
 * Off when `captcha:secret-key` is empty. Anything but a timely `success: true` is
 * false, and so is an answer whose `hostname` is not `captcha:expected-hostname`,
 * whose `action` is not `captcha:expected-action` or whose `score` is below
 * `captcha:min-score` (or missing), for each of those that is set: a token solved on
 * another site, for another form, or by a likely bot does not pass.
 *
 * @example
 * ```ts
 * const captcha = new SiteverifyCaptchaVerifier(loadConfig({ env: {
 *   SVC__SECURITY__CAPTCHA__PROVIDER: 'turnstile', SVC__SECURITY__CAPTCHA__SECRET_KEY: secret } }));
 * await captcha.verify(body.captchaToken, req.ip); // true only if Turnstile says so
 * ```
 */
@injectable()
export class SiteverifyCaptchaVerifier implements CaptchaVerifier {
  readonly enabled: boolean;
  readonly #secret: string;
  readonly #verifyUrl: string;
  readonly #expected: PortcullisConfig['security']['captcha'];
  #timeoutMs = 5000;

  constructor(@inject(PORTCULLIS_CONFIG) config: PortcullisConfig) {
    const { secretKey, verifyUrl } = config.security.captcha;
    this.enabled = !secretKey.isEmpty;
    this.#secret = secretKey.reveal();
    this.#verifyUrl = verifyUrl;
    this.#expected = config.security.captcha;
  }

  /**
   * A verifier with options; the constructor stays single-argument for tsyringe.
   *
   * @example
   * ```ts
   * const captcha = SiteverifyCaptchaVerifier.create(config, { timeoutMs: 2000 });
   * ```
   */
  static create(config: PortcullisConfig, options: SiteverifyOptions = {}): SiteverifyCaptchaVerifier {
    const verifier = new SiteverifyCaptchaVerifier(config);
    if (options.timeoutMs !== undefined) verifier.#timeoutMs = options.timeoutMs;
    return verifier;
  }

  async verify(token: string | undefined, remoteAddress?: string): Promise<boolean> {
    if (!this.enabled) return true;
    if (typeof token !== 'string' || token.length === 0 || token.length > MAX_TOKEN_LENGTH) return false;
    const form = new URLSearchParams({ secret: this.#secret, response: token });
    if (remoteAddress) form.set('remoteip', remoteAddress);
    try {
      const response = await fetch(this.#verifyUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body: form,
        signal: AbortSignal.timeout(this.#timeoutMs),
        redirect: 'error',
      });
      if (!response.ok) return false;
      return this.#accepts((await response.json()) as SiteverifyAnswer | null);
    } catch {
      return false;
    }
  }

  #accepts(answer: SiteverifyAnswer | null): boolean {
    if (answer?.success !== true) return false;
    const { expectedHostname, expectedAction, minScore } = this.#expected;
    if (expectedHostname !== '' && (typeof answer.hostname !== 'string' || answer.hostname.toLowerCase() !== expectedHostname)) return false;
    if (expectedAction !== '' && answer.action !== expectedAction) return false;
    return minScore === undefined || (typeof answer.score === 'number' && answer.score >= minScore);
  }
}

/** The fields of a siteverify answer that are checked. */
interface SiteverifyAnswer {
  readonly success?: unknown;
  readonly hostname?: unknown;
  readonly action?: unknown;
  readonly score?: unknown;
}
