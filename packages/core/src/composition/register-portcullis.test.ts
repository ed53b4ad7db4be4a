import 'reflect-metadata';
import { container as rootContainer, inject, injectable } from 'tsyringe';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../config/load-config.js';
import { PORTCULLIS_CONFIG } from '../contracts/injection-tokens.js';
import { PortcullisError } from '../errors/portcullis-error.js';
import { AccessTokenIssuer, I_ACCESS_TOKEN_ISSUER } from '../jwt/access-token-issuer.js';
import { JwtTokenIssuer } from '../jwt/jwt-token-issuer.js';
import { JwtTokenValidator } from '../jwt/jwt-token-validator.js';
import { silentLoggerFactory } from '../logging/logger.js';
import { PasswordHasher } from '../password/password-hasher.js';
import { TokenSessionSync } from '../session/token-session-sync.js';
import { JwtAuth } from '../shield/jwt-auth.js';
import { ShieldEnforcer } from '../shield/shield-enforcer.js';
import { registerPortcullis, type PortcullisRegistration } from './register-portcullis.js';

const KEY = Buffer.alloc(32, 7).toString('base64');

@injectable()
class TokenEndpoint {
  constructor(readonly issuer: AccessTokenIssuer, @inject(I_ACCESS_TOKEN_ISSUER) readonly issuerByInterface: AccessTokenIssuer) {}
}

describe('registerPortcullis', () => {
  const registrations: PortcullisRegistration[] = [];
  afterEach(async () => {
    await Promise.all(registrations.splice(0).map((r) => r.close()));
  });

  it('with mode jwt, resolves every built-in service and a user class by constructor injection', async () => {
    const container = rootContainer.createChildContainer();
    const config = loadConfig({ env: { SVC__SECURITY__MODE: 'jwt', SVC__SECURITY__KEY: KEY }, tree: {} });
    registrations.push(registerPortcullis(container, { config, loggers: silentLoggerFactory }));

    const endpoint = container.resolve(TokenEndpoint);
    expect(endpoint.issuer).toBeInstanceOf(AccessTokenIssuer);
    expect(endpoint.issuerByInterface).toBe(endpoint.issuer);
    for (const service of [JwtTokenValidator, JwtTokenIssuer, JwtAuth, TokenSessionSync, ShieldEnforcer, PasswordHasher]) {
      expect(container.resolve(service as never)).toBeInstanceOf(service);
    }
    expect(container.resolve(PORTCULLIS_CONFIG)).toBe(config);

    const { token } = endpoint.issuer.issue('player-1');
    const verdict = container.resolve(JwtTokenValidator).validate(token);
    expect(verdict.ok && verdict.principal.id).toBe('player-1');
  });

  it('without mode jwt, leaves the JWT services unregistered', () => {
    const container = rootContainer.createChildContainer();
    const config = loadConfig({ env: { SVC__SECURITY__KEY: KEY }, tree: {} });
    registrations.push(registerPortcullis(container, { config, loggers: silentLoggerFactory }));
    expect(container.isRegistered(JwtTokenValidator, true)).toBe(false);
    expect(container.isRegistered(I_ACCESS_TOKEN_ISSUER, true)).toBe(false);
    expect(container.resolve(PasswordHasher)).toBeInstanceOf(PasswordHasher);
  });

  it('in production refuses a weak key before registering anything', () => {
    const container = rootContainer.createChildContainer();
    const config = loadConfig({ env: { NODE_ENV: 'production', SVC__SECURITY__MODE: 'jwt', SVC__SECURITY__KEY: 'c2hvcnQ=' }, tree: {} });
    expect(() => registerPortcullis(container, { config, loggers: silentLoggerFactory })).toThrow(PortcullisError);
    expect(container.isRegistered(PORTCULLIS_CONFIG, true)).toBe(false);
  });
});
