/**
 * The login service's refusals that carry a safe extra field.
 */
import { PortcullisError } from '../errors/portcullis-error.js';

/**
 * Too many failed logins for one account name: try again after
 * `retryAfterSeconds` (HTTP answers 429 with `Retry-After`).
 *
 * @example
 * ```ts
 * if (err instanceof LockedOutError) res.set('Retry-After', String(err.retryAfterSeconds));
 * ```
 */
export class LockedOutError extends PortcullisError {
  declare readonly retryAfterSeconds: number;

  constructor(retryAfterSeconds: number) {
    const seconds = Math.max(1, Math.ceil(retryAfterSeconds));
    super('locked_out', `too many failed logins; try again in ${seconds} s`, { retryAfterSeconds: seconds });
    this.name = 'LockedOutError';
  }
}
