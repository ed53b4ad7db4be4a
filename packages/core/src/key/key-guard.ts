import { createSecretKey, timingSafeEqual } from 'node:crypto';
import type { Logger } from '../contracts/logger.js';
import type { PortcullisConfig } from '../contracts/portcullis-config.js';
import type { SigningKey } from '../contracts/signing-key.js';
import { PortcullisError } from '../errors/portcullis-error.js';

/**
 * The public development key. Anyone can sign tokens with it: production refuses it.
 * Base64 of the text `portcullis-public-development-key-never-use-in-production`.
 *
 * @example
 * ```ts
 * if (config.security.key?.reveal() === DEVELOPMENT_KEY) log.warn('anyone can sign tokens');
 * ```
 */
export const DEVELOPMENT_KEY = Buffer.from('portcullis-public-development-key-never-use-in-production').toString('base64');

const BASE64 = /^(?:[A-Za-z0-9+/]+|[A-Za-z0-9_-]+)={0,2}$/;

/**
 * Decodes standard or URL-safe base64; undefined when the text is not base64.
 *
 * @example
 * ```ts
 * decodeBase64Key('QUJD');        // <Buffer 41 42 43>
 * decodeBase64Key('not base64!'); // undefined
 * ```
 */
export function decodeBase64Key(text: string): Buffer | undefined {
  if (!BASE64.test(text) || text.replace(/=+$/, '').length % 4 === 1) return undefined;
  return Buffer.from(text, 'base64');
}

function refuse(problem: string): never {
  throw new PortcullisError('key_rejected', `refusing to start: svc:security:key ${problem}`);
}

/**
 * Applies the key guard and returns the signing key. In production
 * (`NODE_ENV=production`) it throws when the key is unset, equals the development
 * key, is not base64 or decodes to fewer than `min-key-bytes`; elsewhere it logs one
 * warning and falls back to the development key. A key that is not base64 is
 * refused everywhere.
 *
 * @example
 * ```ts
 * const key = resolveSigningKey(loadConfig(), consoleLoggerFactory.create('portcullis'));
 * jwt.sign(payload, key.keyObject, { algorithm: 'HS256' });
 * ```
 */
export function resolveSigningKey(config: PortcullisConfig, logger: Logger): SigningKey {
  const { key, minKeyBytes } = config.security;
  const development = Buffer.from(DEVELOPMENT_KEY, 'base64');
  const fallback = (warning: string): SigningKey => {
    logger.warn(`${warning}; using the public development key, which anyone can sign tokens with. Set SVC__SECURITY__KEY before production.`);
    return { keyObject: createSecretKey(development), isDevelopment: true };
  };

  if (key === undefined || key.isEmpty) {
    if (config.production) refuse('is unset (set SVC__SECURITY__KEY to at least ' + minKeyBytes + ' random bytes, base64)');
    return fallback('svc:security:key is unset');
  }
  const bytes = decodeBase64Key(key.reveal());
  if (!bytes) refuse('is not base64 text (standard or URL-safe alphabet)');
  const isDevelopment = bytes.length === development.length && timingSafeEqual(bytes, development);
  if (isDevelopment) {
    if (config.production) refuse('is the public development key');
    return fallback('svc:security:key is the development key');
  }
  if (bytes.length < minKeyBytes) {
    if (config.production) refuse(`decodes to ${bytes.length} bytes; at least min-key-bytes (${minKeyBytes}) are required`);
    logger.warn(`svc:security:key decodes to ${bytes.length} bytes, fewer than min-key-bytes (${minKeyBytes}); production will refuse it`);
  }
  return { keyObject: createSecretKey(bytes), isDevelopment: false };
}
