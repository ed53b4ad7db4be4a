/**
 * The captcha contract the login service checks before a password.
 */
import type { InjectionToken } from 'tsyringe';

/**
 * Checks a captcha response token with its provider. Implementations fail
 * closed: a timeout, a network error or an unreadable answer is `false`.
 *
 * @example
 * ```ts
 * if (captcha.enabled && !(await captcha.verify(body.captchaToken, req.ip))) throw new PortcullisError('captcha_failed', 'captcha not solved');
 * ```
 */
export interface CaptchaVerifier {
  /** False when captcha is off (empty `captcha:secret-key`); then nothing is checked. */
  readonly enabled: boolean;
  /**
   * True when the provider confirms `token`. A missing or empty token is `false`
   * without asking the provider. Always true when {@link enabled} is false.
   */
  verify(token: string | undefined, remoteAddress?: string): Promise<boolean>;
}

/**
 * Injection token of the application's {@link CaptchaVerifier}.
 *
 * @example
 * ```ts
 * container.register(CAPTCHA_VERIFIER, { useValue: { enabled: false, verify: async () => true } });
 * ```
 */
export const CAPTCHA_VERIFIER: InjectionToken<CaptchaVerifier> = Symbol.for('portcullis:captcha-verifier');
