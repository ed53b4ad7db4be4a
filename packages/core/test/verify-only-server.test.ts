import 'reflect-metadata';
import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AccessTokenIssuer, JwtAuth, JwtTokenIssuer, JwtTokenValidator, SIGNING_KEY } from '../src/index.js';
import { createMemoryTestStack, type TestStack } from '../src/testing.js';

const { privateKey, publicKey } = generateKeyPairSync('ed25519');
const signingEnv = { SVC__SECURITY__JWT__ALGORITHM: 'EdDSA', SVC__SECURITY__SIGNING_KEY: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() };
const verifyOnlyEnv = {
  SVC__SECURITY__JWT__ALGORITHM: 'EdDSA',
  SVC__SECURITY__JWT__VERIFY_ONLY: 'true',
  SVC__SECURITY__PUBLIC_KEY: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
};

let signing: TestStack;
let gameServer: TestStack;
beforeAll(async () => {
  signing = await createMemoryTestStack({ env: signingEnv });
  gameServer = await createMemoryTestStack({ env: verifyOnlyEnv });
});
afterAll(async () => {
  await signing?.close();
  await gameServer?.close();
});

describe('a dedicated game server registered with the public key alone', () => {
  it('authenticates the tokens the login server issues through the same shield as any server', async () => {
    const { accessToken } = signing.container.resolve(JwtTokenIssuer).issueLoginPair('player-42', { name: 'ana', role: 'player' });
    const result = await gameServer.container.resolve(JwtAuth).authenticate({ transport: 'ws', credential: accessToken, clientId: 'c1', remoteAddress: '127.0.0.1' });
    expect(result).toMatchObject({ ok: true, principal: { id: 'player-42', name: 'ana', roles: ['player'] } });
    expect(gameServer.container.resolve(JwtTokenValidator).validate(accessToken).ok).toBe(true);
  });

  it('cannot mint: its key ring holds no private key and both issuers refuse', () => {
    const keys = gameServer.container.resolve(SIGNING_KEY);
    expect(keys.signingKeyObject).toBeUndefined();
    expect([...keys.verificationKeys.values()].map((k) => k.type)).toEqual(['public']);
    expect(() => gameServer.container.resolve(AccessTokenIssuer).issue('player-42')).toThrow(expect.objectContaining({ code: 'key_rejected' }));
    expect(() => gameServer.container.resolve(JwtTokenIssuer).issueLoginPair('player-42')).toThrow(expect.objectContaining({ code: 'key_rejected' }));
  });

  it('refuses a token from another signing key, even one carrying the right kid', async () => {
    const stranger = await createMemoryTestStack({ env: { SVC__SECURITY__JWT__ALGORITHM: 'EdDSA' } });
    try {
      const foreign = stranger.container.resolve(AccessTokenIssuer).issue('player-42').token;
      const validator = gameServer.container.resolve(JwtTokenValidator);
      expect(validator.validate(foreign)).toEqual({ ok: false, reason: 'unknown_key' });
      const [, payload, signature] = foreign.split('.');
      const header = Buffer.from(JSON.stringify({ alg: 'EdDSA', typ: 'at+jwt', kid: gameServer.container.resolve(SIGNING_KEY).kid })).toString('base64url');
      expect(validator.validate(`${header}.${payload}.${signature}`)).toEqual({ ok: false, reason: 'bad_signature' });
    } finally {
      await stranger.close();
    }
  });
});
