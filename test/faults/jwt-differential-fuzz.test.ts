/**
 * Differential fuzz of the hand-written JWT validator against two oracles with their
 * strictest options: jsonwebtoken (HS256) and jose (HS256 and EdDSA). Seeded: real tokens
 * mutated character by character, header and payload fields swapped and changed, re-signed
 * with the right key, a wrong key, or not at all. Every token an oracle refuses, ours must
 * refuse; every refusal of ours that both oracles accept must be a rule docs/security.md lists.
 */
import { createHmac, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { AccessTokenIssuer, JwtTokenValidator, loadConfig, resolveSigningKey, silentLoggerFactory, type SigningKey } from '@portcullis/core';
import * as jose from 'jose';
import jwt from 'jsonwebtoken';
import { describe, expect, it } from 'vitest';
import { seededRandom } from './support/fuzz-inputs.js';

const SEED = 0x6a77_0012;
const CASES = 1000;
const SKEW = 30;
const HMAC_KEY = Buffer.alloc(32, 7).toString('base64');
const ED25519 = generateKeyPairSync('ed25519');

/** Refusals of ours that the oracles accept, with the documented rule each applies. */
const STRICTER_RULES: Readonly<Record<string, string>> = {
  unknown_key: 'a `kid` must name a configured key',
  malformed: 'segments are base64url; `kid`, `sub` and `jti` are strings; `iat` and `exp` are required',
  missing_claim: 'a token carries `exp`, `iat`, `sub` and `jti`',
  issued_in_future: '`iat` is not in the future',
  wrong_type: 'header `typ` is `at+jwt` or `refresh+jwt`',
  unsupported_header: 'no `crit`, `jwk`, `jku`, `x5u`, `x5c` or `zip` header',
  bad_signature: 'the signature segment is the canonical base64url of its bytes',
  wrong_algorithm: '`alg` is exactly the configured algorithm',
};

type Mode = { readonly name: 'HS256' | 'EdDSA'; readonly keys: SigningKey; readonly validator: JwtTokenValidator; readonly issuer: AccessTokenIssuer };

function modeOf(env: Record<string, string>): Mode {
  const config = loadConfig({ env, tree: {} });
  const keys = resolveSigningKey(config, silentLoggerFactory.create('fuzz'));
  return { name: keys.algorithm, keys, validator: new JwtTokenValidator(config, keys), issuer: new AccessTokenIssuer(config, keys) };
}

const HS = modeOf({ SVC__SECURITY__KEY: HMAC_KEY });
const ED = modeOf({
  SVC__SECURITY__JWT__ALGORITHM: 'EdDSA',
  SVC__SECURITY__SIGNING_KEY: ED25519.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
});
const WRONG_HMAC = Buffer.alloc(32, 8);

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const ODD = ['=', '+', '/', '.', ' ', '\n', '%', '\u0000', '\u00e9', '\u0141', '\ud83d\ude00'];

function pick<T>(random: () => number, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)]!;
}

const decode = (segment: string): unknown => {
  try {
    return JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
};
const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** Signs `header.payload` text as `mode` would, with its key, a wrong key, or the public key as HMAC secret. */
function resign(mode: Mode, input: string, random: () => number): string {
  const choice = random();
  if (mode.name === 'EdDSA' && choice < 0.75) return `${input}.${sign(null, Buffer.from(input), ED25519.privateKey).toString('base64url')}`;
  if (mode.name === 'EdDSA') {
    const spki = ED25519.publicKey.export({ type: 'spki', format: 'pem' });
    return `${input}.${createHmac('sha256', spki).update(input).digest('base64url')}`;
  }
  const key: KeyObject | Buffer = choice < 0.85 ? mode.keys.keyObject : WRONG_HMAC;
  return `${input}.${createHmac('sha256', key).update(input).digest('base64url')}`;
}

/** One character changed, inserted or deleted somewhere in the token; not re-signed. */
function mutateText(token: string, random: () => number): string {
  const at = Math.floor(random() * token.length);
  const c = token[at]!;
  const r = random();
  if (r < 0.35) return token.slice(0, at) + pick(random, ALPHABET.split('')) + token.slice(at + 1);
  if (r < 0.5) return token.slice(0, at) + String.fromCharCode(0x100 + c.charCodeAt(0)) + token.slice(at + 1);
  if (r < 0.65) return token.slice(0, at) + pick(random, ODD) + token.slice(at);
  if (r < 0.8) return token.slice(0, at) + token.slice(at + 1);
  if (r < 0.9) return token + pick(random, ['=', '==', 'A', '.', '.x']);
  return token.slice(0, at) + c + c + token.slice(at + 1);
}

const now = () => Math.floor(Date.now() / 1000);
const FIELD_CHANGES: ReadonlyArray<(h: Record<string, unknown>, p: Record<string, unknown>, random: () => number) => void> = [
  (h) => (h.alg = pick(Math.random, ['none', 'HS384', 'RS256', 'hs256', 'EdDSA', 'HS256', 'ES256', 'Ed25519'])),
  (h) => delete h.alg,
  (h) => delete h.kid,
  (h, _p, r) => (h.kid = pick(r, ['', 'x', 7, null, 'AAAAAAAAAAAAAAAA', ['a']])),
  (h, _p, r) => (h.typ = pick(r, ['JWT', 'refresh+jwt', 'application/at+jwt', 'AT+JWT', 7, undefined])),
  (h, _p, r) => (h[pick(r, ['crit', 'jwk', 'jku', 'x5u', 'x5c', 'zip', 'b64', 'cty'])] = pick(r, [['exp'], 'DEF', false, {}])),
  (h, p, r) => {
    const name = pick(r, ['sub', 'exp', 'iat', 'alg', 'typ', 'kid', 'aud']);
    const [from, to] = r() < 0.5 ? [h, p] : [p, h];
    if (name in from) [to[name], from[name]] = [from[name], to[name]];
  },
  (_h, p, r) => delete p[pick(r, ['exp', 'iat', 'nbf', 'sub', 'jti', 'iss', 'aud'])],
  (_h, p, r) => (p.exp = pick(r, [now() - SKEW - 5, now() - SKEW + 5, `${now() + 60}`, null, 1e309, now() + 1e6, -1, 1.5])),
  (_h, p, r) => (p.nbf = pick(r, [now() + SKEW + 5, now() + SKEW - 5, 'soon', null, now()])),
  (_h, p, r) => (p.iat = pick(r, [now() + SKEW + 60, now() + 5, 'x', null, now() - 1000])),
  (_h, p, r) => (p.aud = pick(r, ['other', ['other', 'portcullis'], [], 'PORTCULLIS', 7, ['portcullis']])),
  (_h, p, r) => (p.iss = pick(r, ['other', 'portcullis ', ['portcullis'], null])),
  (_h, p, r) => (p.sub = pick(r, ['', 7, null, ['a'], 'someone-else'])),
  (_h, p, r) => (p.jti = pick(r, ['', 7, null])),
];

interface Case {
  readonly token: string;
  readonly how: string;
}

function cases(mode: Mode, seed: number, count: number): Case[] {
  const random = seededRandom(seed);
  const base = [mode.issuer.issue('player-42', { role: 'player' }).token, mode.issuer.issue('p', { name: 'ana', n: [1, { a: null }] }).token];
  const out: Case[] = [];
  for (let i = 0; i < count; i++) {
    const token = pick(random, base);
    const [h, p] = token.split('.') as [string, string, string];
    const kind = random();
    if (kind < 0.4) {
      out.push({ token: mutateText(token, random), how: 'text mutation, not re-signed' });
    } else if (kind < 0.55) {
      const mutated = mutateText(`${h}.${p}`, random);
      out.push({ token: resign(mode, mutated, random), how: 'text mutation of header.payload, re-signed' });
    } else {
      const header = decode(h) as Record<string, unknown>;
      const payload = decode(p) as Record<string, unknown>;
      const changes = 1 + Math.floor(random() * 2);
      for (let c = 0; c < changes; c++) pick(random, FIELD_CHANGES)(header, payload, random);
      const input = `${encode(header)}.${encode(payload)}`;
      out.push(random() < 0.85 ? { token: resign(mode, input, random), how: 'fields changed, re-signed' } : { token: `${input}.${token.split('.')[2]}`, how: 'fields changed, old signature' });
    }
  }
  return out;
}

function jsonwebtokenAccepts(token: string): boolean {
  try {
    jwt.verify(token, HS.keys.keyObject, { algorithms: ['HS256'], issuer: 'portcullis', audience: 'portcullis', clockTolerance: SKEW });
    return true;
  } catch {
    return false;
  }
}

async function joseAccepts(mode: Mode, token: string): Promise<boolean> {
  const key = mode.name === 'EdDSA' ? ED25519.publicKey : mode.keys.keyObject;
  try {
    await jose.jwtVerify(token, key, {
      algorithms: [mode.name],
      issuer: 'portcullis',
      audience: 'portcullis',
      clockTolerance: SKEW,
      typ: 'at+jwt',
      requiredClaims: ['exp', 'iat', 'sub', 'jti', 'iss', 'aud'],
    });
    return true;
  } catch {
    return false;
  }
}

interface Finding {
  readonly token: string;
  readonly how: string;
  readonly ours: string;
}

async function differential(mode: Mode, seed: number, count: number) {
  const missed: Finding[] = [];
  const stricter = new Map<string, number>();
  let accepted = 0;
  for (const { token, how } of cases(mode, seed, count)) {
    const ours = mode.validator.validate(token);
    const byJose = await joseAccepts(mode, token);
    const byJsonwebtoken = mode.name === 'HS256' ? jsonwebtokenAccepts(token) : byJose;
    if (ours.ok) {
      accepted++;
      if (!byJose || !byJsonwebtoken) missed.push({ token, how, ours: 'accepted' });
    } else if (byJose && byJsonwebtoken) {
      stricter.set(ours.reason, (stricter.get(ours.reason) ?? 0) + 1);
    }
  }
  return { missed, stricter, accepted };
}

const securityDoc = readFileSync(new URL('../../docs/security.md', import.meta.url), 'utf8');

describe.each([
  ['HS256 against jsonwebtoken and jose', HS, SEED],
  ['EdDSA against jose', ED, SEED + 1],
] as const)('JWT differential fuzz, %s', (_, mode, seed) => {
  it(`refuses every token an oracle refuses, over ${CASES} seeded cases`, async () => {
    const { missed, stricter, accepted } = await differential(mode, seed, CASES);
    expect(missed).toEqual([]);
    expect(accepted).toBeGreaterThan(CASES / 20);
    for (const reason of stricter.keys()) {
      expect(STRICTER_RULES, `refusal "${reason}" that both oracles accept`).toHaveProperty(reason);
      expect(securityDoc, `docs/security.md lists the rule behind "${reason}"`).toContain(`\`${reason}\``);
    }
  });
});
