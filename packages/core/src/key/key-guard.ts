import { createSecretKey, timingSafeEqual } from 'node:crypto';
import type { Logger } from '../contracts/logger.js';
import type { PortcullisConfig } from '../contracts/portcullis-config.js';
import type { SigningKey } from '../contracts/signing-key.js';
import { resolveEd25519Keys } from './ed25519-keys.js';
import { keyRing, refuse } from './key-ring.js';

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

/** Decodes one HMAC key and applies the guard to it; undefined means "use the development key". */
function guardHmacKey(text: string, setting: string, config: PortcullisConfig, logger: Logger): Buffer | undefined {
  const { minKeyBytes } = config.security;
  const bytes = decodeBase64Key(text);
  if (!bytes) refuse(setting, 'is not base64 text (standard or URL-safe alphabet)');
  const development = Buffer.from(DEVELOPMENT_KEY, 'base64');
  if (bytes.length === development.length && timingSafeEqual(bytes, development)) {
    if (config.production) refuse(setting, 'is the public development key');
    return undefined;
  }
  if (bytes.length < minKeyBytes) {
    if (config.production) refuse(setting, `decodes to ${bytes.length} bytes; at least min-key-bytes (${minKeyBytes}) are required`);
    logger.warn(`${setting} decodes to ${bytes.length} bytes, fewer than min-key-bytes (${minKeyBytes}); production will refuse it`);
  }
  return bytes;
}

function resolveHmacKeys(config: PortcullisConfig, logger: Logger): SigningKey {
  const { key, minKeyBytes, previousKeys } = config.security;
  const previous = previousKeys.map((text, i) => guardHmacKey(text.reveal(), `svc:security:previous-keys[${i}]`, config, logger) ?? Buffer.from(DEVELOPMENT_KEY, 'base64'));
  const ring = (bytes: Buffer, isDevelopment: boolean) => {
    const secret = createSecretKey(bytes);
    return keyRing('HS256', secret, secret, previous.map((b) => createSecretKey(b)), isDevelopment);
  };
  const fallback = (warning: string): SigningKey => {
    logger.warn(`${warning}; using the public development key, which anyone can sign tokens with. Set SVC__SECURITY__KEY before production.`);
    return ring(Buffer.from(DEVELOPMENT_KEY, 'base64'), true);
  };
  if (key === undefined || key.isEmpty) {
    if (config.production) refuse('svc:security:key', `is unset (set SVC__SECURITY__KEY to at least ${minKeyBytes} random bytes, base64)`);
    return fallback('svc:security:key is unset');
  }
  const bytes = guardHmacKey(key.reveal(), 'svc:security:key', config, logger);
  return bytes ? ring(bytes, false) : fallback('svc:security:key is the development key');
}

/**
 * Applies the key guard and returns the key ring. With `jwt:algorithm` HS256 (the default),
 * in production (`NODE_ENV=production`) it throws when `key` is unset, equals the development
 * key, is not base64 or decodes to fewer than `min-key-bytes`, and applies the same checks to
 * each of `previous-keys`; elsewhere it logs one warning and falls back to the development key.
 * A key that is not base64 is refused everywhere. With EdDSA it reads the Ed25519 keys
 * ({@link resolveEd25519Keys}).
 *
 * @example
 * ```ts
 * const key = resolveSigningKey(loadConfig(), consoleLoggerFactory.create('portcullis'));
 * key.kid; // the kid every token signed now carries
 * ```
 */
export function resolveSigningKey(config: PortcullisConfig, logger: Logger): SigningKey {
  return config.security.jwt.algorithm === 'EdDSA' ? resolveEd25519Keys(config, logger) : resolveHmacKeys(config, logger);
}
