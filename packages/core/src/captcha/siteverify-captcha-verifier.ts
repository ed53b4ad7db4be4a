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
 * `remoteip`, answered `{"success": true|false, ...}`. Off when
 * `captcha:secret-key` is empty. Anything but a timely `success: true` is false.
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
  #timeoutMs = 5000;

  constructor(@inject(PORTCULLIS_CONFIG) config: PortcullisConfig) {
    const { secretKey, verifyUrl } = config.security.captcha;
    this.enabled = !secretKey.isEmpty;
    this.#secret = secretKey.reveal();
    this.#verifyUrl = verifyUrl;
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
      const answer = (await response.json()) as { success?: unknown } | null;
      return answer?.success === true;
    } catch {
      return false;
    }
  }
}
