/**
 * Keys: EdDSA (Ed25519) signing and validation beside HS256, beside jose and fast-jwt on the
 * same EdDSA token; and the cost of choosing the key by `kid` among three keys against one.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { createSigner, createVerifier } from 'fast-jwt';
import * as jose from 'jose';
import { AccessTokenIssuer, JwtTokenValidator, loadConfig, resolveSigningKey, silentLoggerFactory } from '@portcullis/core';
import { interleaved, median, ratio } from './lib/measure.js';

export const title = 'Keys: EdDSA beside HS256, jose and fast-jwt; kid selection (ops/s, one core)';

function portcullis(env) {
  const config = loadConfig({ env, tree: {} });
  const key = resolveSigningKey(config, silentLoggerFactory.create('bench'));
  return { issuer: new AccessTokenIssuer(config, key), validator: new JwtTokenValidator(config, key) };
}

const CLAIMS = { name: 'alice', role: ['player', 'admin'] };

/** CPU time (user + system, µs) of `iterations` calls of `fn`: unlike wall time, it does not count time the process waited for a core. */
function cpuMicros(fn, iterations) {
  const start = process.cpuUsage();
  for (let i = 0; i < iterations; i++) fn();
  const used = process.cpuUsage(start);
  return used.user + used.system;
}

/**
 * The extra cost of `other` over `base`, in percent: adjacent runs of the two (in alternating
 * order) give one CPU-time ratio per pair, and the median of those ratios is taken, so load from
 * other processes cancels out of each pair.
 */
function pairedOverhead(base, other, { pairs, iterations }) {
  cpuMicros(base, iterations);
  cpuMicros(other, iterations);
  const ratios = [];
  for (let i = 0; i < pairs; i++) {
    if (i % 2) {
      const b = cpuMicros(base, iterations);
      ratios.push(cpuMicros(other, iterations) / b);
    } else {
      const o = cpuMicros(other, iterations);
      ratios.push(o / cpuMicros(base, iterations));
    }
  }
  return (median(ratios) - 1) * 100;
}

export async function run({ rounds = 5, durationMs = 1000 } = {}) {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const privatePem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const publicPem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
  const ed = portcullis({ SVC__SECURITY__JWT__ALGORITHM: 'EdDSA', SVC__SECURITY__SIGNING_KEY: privatePem });
  const hmacKeys = [randomBytes(32), randomBytes(32), randomBytes(32)].map((b) => b.toString('base64'));
  const hs = portcullis({ SVC__SECURITY__KEY: hmacKeys[0] });
  const hsThree = portcullis({ SVC__SECURITY__KEY: hmacKeys[0], SVC__SECURITY__PREVIOUS_KEYS: hmacKeys.slice(1).join(',') });
  const hsOld = portcullis({ SVC__SECURITY__KEY: hmacKeys[2] });

  const edToken = ed.issuer.issue('player-42', CLAIMS, 3600).token;
  const hsToken = hs.issuer.issue('player-42', CLAIMS, 3600).token;
  const oldToken = hsOld.issuer.issue('player-42', CLAIMS, 3600).token;
  const fastSign = createSigner({ key: privatePem, algorithm: 'EdDSA', expiresIn: 900_000, iss: 'portcullis', aud: 'portcullis' });
  const fastVerify = createVerifier({ key: publicPem, algorithms: ['EdDSA'], cache: false });
  const joseOptions = { algorithms: ['EdDSA'], issuer: 'portcullis', audience: 'portcullis', typ: 'at+jwt' };
  const payload = { sub: 'player-42', ...CLAIMS, jti: 'x' };

  for (const [name, ok] of [
    ['validator EdDSA', ed.validator.validate(edToken).ok],
    ['validator HS256', hs.validator.validate(hsToken).ok],
    ['three keys, active', hsThree.validator.validate(hsToken).ok],
    ['three keys, previous', hsThree.validator.validate(oldToken).ok],
    ['fast-jwt', fastVerify(edToken).sub === 'player-42'],
    ['jose', (await jose.jwtVerify(edToken, publicKey, joseOptions)).payload.sub === 'player-42'],
  ]) {
    if (!ok) throw new Error(`bench setup: ${name} refused the token`);
  }

  const verify = await interleaved(
    [
      ['JwtTokenValidator.validate, EdDSA', () => ed.validator.validate(edToken)],
      ['jose jwtVerify, EdDSA', async () => jose.jwtVerify(edToken, publicKey, joseOptions)],
      ['fast-jwt createVerifier (cache off), EdDSA', () => fastVerify(edToken)],
      ['JwtTokenValidator.validate, HS256, one key', () => hs.validator.validate(hsToken)],
      ['JwtTokenValidator.validate, HS256, three keys (kid of the active key)', () => hsThree.validator.validate(hsToken)],
      ['JwtTokenValidator.validate, HS256, three keys (kid of a previous key)', () => hsThree.validator.validate(oldToken)],
    ],
    { rounds, durationMs },
  );
  const sign = await interleaved(
    [
      ['AccessTokenIssuer.issue, EdDSA', () => ed.issuer.issue('player-42', CLAIMS)],
      ['jose SignJWT, EdDSA', async () => new jose.SignJWT(payload).setProtectedHeader({ alg: 'EdDSA', typ: 'at+jwt' }).setIssuedAt().setExpirationTime('15m').setIssuer('portcullis').setAudience('portcullis').sign(privateKey)],
      ['fast-jwt createSigner, EdDSA', () => fastSign(payload)],
      ['AccessTokenIssuer.issue, HS256', () => hs.issuer.issue('player-42', CLAIMS)],
    ],
    { rounds, durationMs },
  );

  const pairing = { pairs: rounds * 20, iterations: Math.max(2000, Math.round(durationMs * 5)) };
  const activeOverhead = pairedOverhead(() => hs.validator.validate(hsToken), () => hsThree.validator.validate(hsToken), pairing);
  const previousOverhead = pairedOverhead(() => hs.validator.validate(hsToken), () => hsThree.validator.validate(oldToken), pairing);
  const ops = new Map([...verify, ...sign]);
  const of = (name) => ops.get(name);
  const rows = [
    ...verify.map(([name, n]) => ({ case: `verify: ${name}`, 'ops/s': Math.round(n), ratio: ratio(n, of('JwtTokenValidator.validate, EdDSA')) })),
    ...sign.map(([name, n]) => ({ case: `sign: ${name}`, 'ops/s': Math.round(n), ratio: ratio(n, of('AccessTokenIssuer.issue, EdDSA')) })),
  ];
  const one = of('JwtTokenValidator.validate, HS256, one key');
  return {
    columns: ['case', 'ops/s', 'ratio'],
    rows,
    notes: [
      'ratio: to JwtTokenValidator.validate EdDSA for the verify rows, to AccessTokenIssuer.issue EdDSA for the sign rows',
      `choosing the key by kid among three keys, over one key (CPU time, median of ${pairing.pairs} paired runs of ${pairing.iterations} validations): ${activeOverhead.toFixed(1)} % for a token of the active key, ${previousOverhead.toFixed(1)} % for a token of a previous key; the header's verdict, with its key, is cached per header text, so the choice is one Map lookup either way`,
      `EdDSA validation is ${ratio(one, of('JwtTokenValidator.validate, EdDSA'))}x slower than HS256 (Ed25519 verification dominates); the validator adds every claim rule and builds the principal`,
      'jose is asynchronous (each call awaited); fast-jwt and portcullis are synchronous',
      'cases are measured round-robin in slices of a fifth of a round; each ops/s is the median slice',
    ],
  };
}
