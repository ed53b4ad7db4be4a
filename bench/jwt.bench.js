/**
 * JWT validation throughput: portcullis's JwtTokenValidator (with all its extra
 * checks and the principal it builds) beside jsonwebtoken, fast-jwt and a raw
 * node:crypto HMAC floor, all on the same HS256 access token.
 */
import { createHmac, createSecretKey, randomBytes, timingSafeEqual } from 'node:crypto';
import { createVerifier } from 'fast-jwt';
import jwt from 'jsonwebtoken';
import {
  AccessTokenIssuer,
  JwtTokenValidator,
  loadConfig,
  resolveSigningKey,
  silentLoggerFactory,
} from '@portcullis/core';
import { interleaved, ratio } from './lib/measure.js';

export const title = 'JWT validation (HS256, ops/s, one core)';

function setup(mapInboundClaims) {
  const secret = randomBytes(32);
  const env = { SVC__SECURITY__KEY: secret.toString('base64'), SVC__SECURITY__JWT__MAP_INBOUND_CLAIMS: String(mapInboundClaims) };
  const config = loadConfig({ env, tree: {} });
  const key = resolveSigningKey(config, silentLoggerFactory.create('bench'));
  return { secret, config, key };
}

/** The raw floor: split, HMAC-SHA256 with the KeyObject, constant-time compare, JSON.parse. */
function rawFloor(keyObject) {
  return (token) => {
    const lastDot = token.lastIndexOf('.');
    const expected = createHmac('sha256', keyObject).update(token.slice(0, lastDot)).digest();
    const given = Buffer.from(token.slice(lastDot + 1), 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(expected, given)) throw new Error('bad signature');
    return JSON.parse(Buffer.from(token.slice(token.indexOf('.') + 1, lastDot), 'base64url').toString('utf8'));
  };
}

export async function run({ rounds = 5, durationMs = 1000 } = {}) {
  const { secret, config, key } = setup(true);
  const unmapped = setup(false);
  const issuer = new AccessTokenIssuer(config, key);
  const { token } = issuer.issue('player-42', { name: 'alice', role: ['player', 'admin'] }, 3600);
  const unmappedToken = new AccessTokenIssuer(unmapped.config, unmapped.key).issue('player-42', { name: 'alice', role: ['player', 'admin'] }, 3600).token;

  const validator = new JwtTokenValidator(config, key);
  const validatorUnmapped = new JwtTokenValidator(unmapped.config, unmapped.key);
  const keyObject = createSecretKey(secret);
  const fastNoCache = createVerifier({ key: secret, algorithms: ['HS256'], cache: false });
  const fastCache = createVerifier({ key: secret, algorithms: ['HS256'], cache: true });
  const floor = rawFloor(keyObject);

  for (const [name, check] of [
    ['validator', () => validator.validate(token).ok],
    ['validator unmapped', () => validatorUnmapped.validate(unmappedToken).ok],
    ['jsonwebtoken', () => jwt.verify(token, keyObject, { algorithms: ['HS256'] }).sub === 'player-42'],
    ['fast-jwt', () => fastNoCache(token).sub === 'player-42'],
    ['floor', () => floor(token).sub === 'player-42'],
  ]) {
    if (!check()) throw new Error(`bench setup: ${name} refused the token`);
  }

  const cases = [
    ['fast-jwt createVerifier (cache off)', () => fastNoCache(token)],
    ['JwtTokenValidator.validate (claims mapped, default)', () => validator.validate(token)],
    ['JwtTokenValidator.validate (map-inbound-claims false)', () => validatorUnmapped.validate(unmappedToken)],
    ['jsonwebtoken.verify (Buffer key)', () => jwt.verify(token, secret, { algorithms: ['HS256'] })],
    ['jsonwebtoken.verify (KeyObject)', () => jwt.verify(token, keyObject, { algorithms: ['HS256'] })],
    ['fast-jwt createVerifier (cache on)', () => fastCache(token)],
    ['node:crypto HMAC-SHA256 + timingSafeEqual floor', () => floor(token)],
  ];
  const measured = await interleaved(cases, { rounds, durationMs });
  const baseline = measured[0][1];
  const column = 'ratio to fast-jwt (cache off)';
  const rows = measured.map(([name, ops]) => ({ case: name, 'ops/s': Math.round(ops), [column]: ratio(ops, baseline) }));

  const [[, signOurs], [, signJwt]] = await interleaved(
    [
      ['AccessTokenIssuer.issue', () => issuer.issue('player-42', { name: 'alice' })],
      ['jsonwebtoken.sign', () => jwt.sign({ sub: 'player-42', name: 'alice', jti: 'x', iss: 'portcullis', aud: 'portcullis' }, keyObject, { algorithm: 'HS256', expiresIn: 900, header: { typ: 'at+jwt' } })],
    ],
    { rounds, durationMs },
  );
  return {
    columns: ['case', 'ops/s', column],
    rows,
    notes: [
      `token: ${token.length} characters (sub, name, two roles, jti, iat, nbf, exp, iss, aud); the validator also builds the principal`,
      'the validator verifies with node:crypto (HMAC over the KeyObject, constant-time compare of the signature bytes) and adds the header, exp, iat, nbf, iss, aud, typ, sub and jti rules',
      'cases are measured round-robin in slices of a fifth of a round; each ops/s is the median slice',
      `signing: AccessTokenIssuer.issue ${Math.round(signOurs)} ops/s, jsonwebtoken.sign (KeyObject) ${Math.round(signJwt)} ops/s (ratio ${ratio(signOurs, signJwt)})`,
    ],
  };
}
