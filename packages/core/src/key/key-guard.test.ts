import { createHmac, randomBytes } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../config/load-config.js';
import type { Logger } from '../contracts/logger.js';
import { PortcullisError } from '../errors/portcullis-error.js';
import { DEVELOPMENT_KEY, decodeBase64Key, resolveSigningKey } from './key-guard.js';

function recordingLogger() {
  const logger = { debug: vi.fn(), info: vi.fn(), warn: vi.fn(), error: vi.fn() } satisfies Logger;
  const lines = () => Object.values(logger).flatMap((fn) => fn.mock.calls.map((call) => String(call[0])));
  return { logger, lines };
}

function configFor(key: string | undefined, { production = false, minKeyBytes }: { production?: boolean; minKeyBytes?: number } = {}) {
  const env: Record<string, string> = {};
  if (key !== undefined) env.SVC__SECURITY__KEY = key;
  if (production) env.NODE_ENV = 'production';
  if (minKeyBytes !== undefined) env.SVC__SECURITY__MIN_KEY_BYTES = String(minKeyBytes);
  return loadConfig({ env, tree: {} });
}

function refusal(key: string | undefined, options: { minKeyBytes?: number } = {}): PortcullisError {
  const { logger } = recordingLogger();
  try {
    resolveSigningKey(configFor(key, { production: true, ...options }), logger);
  } catch (e) {
    expect(e).toBeInstanceOf(PortcullisError);
    expect((e as PortcullisError).code).toBe('key_rejected');
    return e as PortcullisError;
  }
  throw new Error('expected the key guard to refuse');
}

const developmentBytes = Buffer.from(DEVELOPMENT_KEY, 'base64');
const urlSafe = (bytes: Buffer) => bytes.toString('base64url');
const hmac = (key: Parameters<typeof createHmac>[1]) => createHmac('sha256', key).update('payload').digest('hex');

describe('resolveSigningKey in production', () => {
  it('refuses an unset key', () => {
    expect(refusal(undefined).message).toMatch(/svc:security:key is unset/);
    expect(refusal('   ').message).toMatch(/is unset/);
  });

  it('refuses the public development key, in either base64 alphabet', () => {
    expect(refusal(DEVELOPMENT_KEY).message).toMatch(/public development key/);
    expect(refusal(urlSafe(developmentBytes)).message).toMatch(/public development key/);
  });

  it('refuses a key that is not base64, without echoing it', () => {
    for (const key of ['this is not base64!', 'abc$def', 'ab+c-d_e/fgh', 'A', 'QUJD===']) {
      const err = refusal(key);
      expect(err.message).toMatch(/not base64/);
      expect(err.message).not.toContain(key);
    }
  });

  it('refuses a key shorter than min-key-bytes, naming both lengths and never the key', () => {
    const key = randomBytes(16).toString('base64');
    const err = refusal(key);
    expect(err.message).toMatch(/decodes to 16 bytes; at least min-key-bytes \(32\)/);
    expect(err.message).not.toContain(key);
    expect(refusal(randomBytes(32).toString('base64'), { minKeyBytes: 48 }).message).toMatch(/32 bytes; at least min-key-bytes \(48\)/);
  });

  it('accepts a random key of min-key-bytes as a secret KeyObject holding the decoded bytes, silently', () => {
    const bytes = randomBytes(32);
    const { logger, lines } = recordingLogger();
    const key = resolveSigningKey(configFor(bytes.toString('base64'), { production: true }), logger);
    expect(key.isDevelopment).toBe(false);
    expect(key.keyObject.type).toBe('secret');
    expect(key.keyObject.symmetricKeySize).toBe(32);
    expect(key.keyObject.export().equals(bytes)).toBe(true);
    expect(hmac(key.keyObject)).toBe(hmac(bytes));
    expect(lines()).toEqual([]);
  });

  it('accepts standard and URL-safe base64, padded or not, as the same key', () => {
    const bytes = Buffer.from(Array.from({ length: 33 }, (_, i) => (i % 2 ? 0xfb : 0xff)));
    const spellings = [bytes.toString('base64'), urlSafe(bytes), bytes.toString('base64').replace(/=+$/, '')];
    expect(spellings[0]).toMatch(/[+/]/);
    expect(spellings[1]).toMatch(/[-_]/);
    for (const text of spellings) {
      const key = resolveSigningKey(configFor(text, { production: true }), recordingLogger().logger);
      expect(key.keyObject.export().equals(bytes)).toBe(true);
    }
  });
});

describe('resolveSigningKey outside production', () => {
  it.each([
    ['unset', undefined],
    ['the development key', DEVELOPMENT_KEY],
  ])('warns exactly once and uses the development key when the key is %s', (_name, key) => {
    const { logger, lines } = recordingLogger();
    const signing = resolveSigningKey(configFor(key), logger);
    expect(signing.isDevelopment).toBe(true);
    expect(signing.keyObject.type).toBe('secret');
    expect(signing.keyObject.export().equals(developmentBytes)).toBe(true);
    expect(logger.warn).toHaveBeenCalledTimes(1);
    expect(lines()).toHaveLength(1);
    expect(lines()[0]).toMatch(/development key/);
  });

  it('uses a short key with one warning that never contains it', () => {
    const text = randomBytes(16).toString('base64');
    const { logger, lines } = recordingLogger();
    const signing = resolveSigningKey(configFor(text), logger);
    expect(signing.isDevelopment).toBe(false);
    expect(signing.keyObject.symmetricKeySize).toBe(16);
    expect(logger.warn).toHaveBeenCalledTimes(1);
    expect(lines()[0]).toMatch(/16 bytes/);
    expect(lines()[0]).not.toContain(text);
  });

  it('still refuses a key that is not base64', () => {
    const { logger } = recordingLogger();
    expect(() => resolveSigningKey(configFor('not base64 at all'), logger)).toThrow(/not base64/);
  });

  it('uses a good key silently', () => {
    const { logger, lines } = recordingLogger();
    expect(resolveSigningKey(configFor(randomBytes(32).toString('base64url')), logger).isDevelopment).toBe(false);
    expect(lines()).toEqual([]);
  });
});

describe('decodeBase64Key', () => {
  it('decodes either alphabet and refuses anything else', () => {
    expect(decodeBase64Key('QUJD')).toEqual(Buffer.from('ABC'));
    expect(decodeBase64Key('QUI=')).toEqual(Buffer.from('AB'));
    expect(decodeBase64Key('QUI')).toEqual(Buffer.from('AB'));
    expect(decodeBase64Key('-_-_')).toEqual(Buffer.from([0xfb, 0xff, 0xbf]));
    for (const bad of ['', 'A', 'QU I=', 'QUJD\n', '+-', 'QUJD====', 'é']) expect(decodeBase64Key(bad)).toBeUndefined();
  });
});
