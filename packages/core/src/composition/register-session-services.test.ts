import 'reflect-metadata';
import { container as root } from 'tsyringe';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../config/load-config.js';
import { PORTCULLIS_CONFIG, SIGNING_KEY } from '../contracts/injection-tokens.js';
import { JwtTokenIssuer } from '../jwt/jwt-token-issuer.js';
import { resolveSigningKey } from '../key/key-guard.js';
import { silentLoggerFactory } from '../logging/logger.js';
import { TokenSessionSync } from '../session/token-session-sync.js';
import { LockoutStore } from '../store/lockout-store.js';
import { SessionStores } from '../store/session-stores.js';
import { registerSessionServices } from './register-session-services.js';

describe('registerSessionServices', () => {
  it('registers singletons that tsyringe builds by constructor injection', async () => {
    const config = loadConfig({ env: {}, tree: { svc: { security: { mode: 'jwt', key: Buffer.alloc(32, 1).toString('base64') } } } });
    const container = root.createChildContainer();
    container.register(PORTCULLIS_CONFIG, { useValue: config });
    container.register(SIGNING_KEY, { useValue: resolveSigningKey(config, silentLoggerFactory.create('test')) });
    const stores = registerSessionServices(container);
    try {
      const sessions = container.resolve(TokenSessionSync);
      expect(container.resolve(TokenSessionSync)).toBe(sessions);
      expect(container.resolve(SessionStores)).toBe(stores);
      expect(container.resolve(LockoutStore)).toBeInstanceOf(LockoutStore);
      expect(stores.cache.provider).toBe('inmemory');
      const session = await sessions.upgrade(container.resolve(JwtTokenIssuer).issueLoginPair('di-user').accessToken);
      expect(await sessions.validate(session.accessToken)).toMatchObject({ id: 'di-user', via: 'session' });
    } finally {
      await stores.close();
    }
  });
});
