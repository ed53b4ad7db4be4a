import 'reflect-metadata';
import { generateKeyPairSync } from 'node:crypto';
import * as jose from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signupAndLogin, startHarness, type Harness } from './support/http-harness.js';
import { ApiController, TestAuthController } from './support/test-controllers.js';

const { privateKey, publicKey } = generateKeyPairSync('ed25519');
const previous = generateKeyPairSync('ed25519').publicKey;
const pem = (key: typeof publicKey, type: 'pkcs8' | 'spki') => key.export({ type, format: 'pem' }).toString();

describe('GET /auth/jwks.json in EdDSA mode', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({
      controllers: [TestAuthController, ApiController],
      env: { SVC__SECURITY__JWT__ALGORITHM: 'EdDSA', SVC__SECURITY__SIGNING_KEY: pem(privateKey, 'pkcs8'), SVC__SECURITY__PREVIOUS_PUBLIC_KEYS: pem(previous, 'spki') },
    });
  });
  afterAll(() => h.close());

  it('answers the active and previous public keys to an anonymous caller', async () => {
    const answer = await h.get('/auth/jwks.json');
    expect(answer.status).toBe(200);
    expect(answer.json.keys).toHaveLength(2);
    expect(answer.json.keys[0]).toEqual({ kty: 'OKP', crv: 'Ed25519', x: publicKey.export({ format: 'jwk' }).x, kid: expect.stringMatching(/^[A-Za-z0-9_-]{16}$/), alg: 'EdDSA', use: 'sig' });
    expect(answer.json.keys[1].x).toBe(previous.export({ format: 'jwk' }).x);
    expect(JSON.stringify(answer.json)).not.toContain('"d"');
  });

  it('publishes what a third party needs to verify a login token with jose', async () => {
    const { accessToken } = await signupAndLogin(h, 'jwksuser');
    const keys = jose.createLocalJWKSet((await h.get('/auth/jwks.json')).json);
    const { payload, protectedHeader } = await jose.jwtVerify(accessToken, keys, { algorithms: ['EdDSA'], issuer: 'portcullis', audience: 'portcullis' });
    expect(protectedHeader.alg).toBe('EdDSA');
    expect(payload.name).toBe('jwksuser');
    expect((await h.get('/api/me', accessToken)).status).toBe(200);
  });
});

describe('GET /auth/jwks.json in HS256 mode', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ controllers: [TestAuthController, ApiController] });
  });
  afterAll(() => h.close());

  it('answers 404 not_found: a shared secret is never published', async () => {
    const answer = await h.get('/auth/jwks.json');
    expect(answer.status).toBe(404);
    expect(answer.json.error).toBe('not_found');
    expect(JSON.stringify(answer.json)).not.toMatch(/[A-Za-z0-9+/]{40,}/);
  });
});
