import 'reflect-metadata';
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { decodePart, setup } from '../../test/support/jwt-kit.js';
import { PortcullisError } from '../errors/portcullis-error.js';

const { issuer, pairs, validator } = setup();

/** Replaces the character at `index` of the signature segment with `replace(char)`. */
function alterSignature(token: string, index: number, replace: (c: string) => string): string {
  const dot = token.lastIndexOf('.');
  const signature = token.slice(dot + 1);
  return `${token.slice(0, dot + 1)}${signature.slice(0, index)}${replace(signature[index]!)}${signature.slice(index + 1)}`;
}

describe('signature malleability', () => {
  it('refuses a signature with one character c replaced by U+0100+c (same low byte)', () => {
    const { token } = issuer.issue('player-42');
    expect(validator.validate(token).ok).toBe(true);
    for (const index of [0, 21, 42]) {
      const forged = alterSignature(token, index, (c) => String.fromCharCode(0x100 + c.charCodeAt(0)));
      expect(forged.length).toBe(token.length);
      expect(validator.validate(forged)).toEqual({ ok: false, reason: 'bad_signature' });
    }
  });

  it('refuses the same attack on a refresh token', () => {
    const { refreshToken } = pairs.issueLoginPair('player-42');
    const forged = alterSignature(refreshToken, 5, (c) => String.fromCharCode(0xff00 + c.charCodeAt(0)));
    expect(validator.validate(forged, 'refresh')).toEqual({ ok: false, reason: 'bad_signature' });
  });

  it('refuses padding, the standard alphabet and a non-canonical last character', () => {
    const { token } = issuer.issue('player-42');
    const signature = token.slice(token.lastIndexOf('.') + 1);
    const bytes = Buffer.from(signature, 'base64url');
    const input = token.slice(0, token.lastIndexOf('.') + 1);
    expect(validator.validate(`${input}${signature}=`).ok).toBe(false);
    expect(validator.validate(`${input}${bytes.toString('base64')}`).ok).toBe(false);
    // The last of 43 characters carries 4 data bits and 2 spare bits; setting a spare bit decodes to the same bytes.
    const last = signature[42]!;
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const sibling = alphabet[alphabet.indexOf(last) ^ 1]!;
    const twin = `${input}${signature.slice(0, 42)}${sibling}`;
    expect(Buffer.from(twin.slice(twin.lastIndexOf('.') + 1), 'base64url').equals(bytes)).toBe(true);
    expect(validator.validate(twin)).toEqual({ ok: false, reason: 'bad_signature' });
  });
});

describe('claims serialised are the claims checked', () => {
  const refuses = (fn: () => unknown) => {
    expect(fn).toThrow(PortcullisError);
  };

  it('refuses a claims object whose toJSON would replace the payload', () => {
    const hostile = { level: 1, toJSON: () => ({ role: 'admin', sub: 'someone-else' }) };
    let token: string | undefined;
    try {
      token = issuer.issue('player-42', hostile).token;
    } catch (error) {
      expect(error).toBeInstanceOf(PortcullisError);
    }
    if (token !== undefined) {
      expect(decodePart(token, 1)).toMatchObject({ sub: 'player-42' });
      expect(decodePart(token, 1)).not.toHaveProperty('role');
    }
    refuses(() => pairs.issueLoginPair('player-42', hostile));
    refuses(() => issuer.withClaims(hostile));
  });

  it('signs a nested value as it serialises, so a nested toJSON cannot add a top-level name', () => {
    const nested = { profile: { toJSON: () => ({ sub: 'someone-else' }) }, at: new Date('2030-01-01T00:00:00Z') };
    const payload = decodePart(issuer.issue('player-42', nested).token, 1);
    expect(payload).toMatchObject({ sub: 'player-42', profile: { sub: 'someone-else' }, at: '2030-01-01T00:00:00.000Z' });
  });

  it('reads a getter once: the value signed is the value the issuer checked and bound', () => {
    let reads = 0;
    const flipping = Object.defineProperty({}, 'role', { enumerable: true, get: () => (reads++ === 0 ? 'player' : 'admin') });
    const bound = issuer.withClaims(flipping);
    expect(bound.claims).toEqual({ role: 'player' });
    expect(decodePart(bound.issue('player-42').token, 1).role).toBe('player');
    const hidden = Object.defineProperty({}, 'sub', { enumerable: true, get: () => 'someone-else' });
    refuses(() => issuer.issue('player-42', hidden));
  });

  it('refuses a claims object with a prototype other than Object.prototype or null', () => {
    const inherited = Object.create({ toJSON: () => ({ sub: 'someone-else' }) }) as Record<string, unknown>;
    inherited.level = 1;
    refuses(() => issuer.issue('player-42', inherited));
    class Claims {
      role = 'player';
    }
    refuses(() => issuer.issue('player-42', new Claims() as unknown as Record<string, unknown>));
  });

  it('refuses a Proxy whose keys differ from its serialisation', () => {
    const target = { level: 1 };
    let calls = 0;
    const proxy = new Proxy(target, { ownKeys: () => (calls++ === 0 ? ['level'] : ['level', 'sub']), getOwnPropertyDescriptor: (t, k) => (k === 'sub' ? { value: 'x', enumerable: true, configurable: true } : Reflect.getOwnPropertyDescriptor(t, k)), get: (t, k) => (k === 'sub' ? 'someone-else' : Reflect.get(t, k)) });
    let token: string | undefined;
    try {
      token = issuer.issue('player-42', proxy).token;
    } catch (error) {
      expect(error).toBeInstanceOf(PortcullisError);
    }
    if (token !== undefined) expect(decodePart(token, 1).sub).toBe('player-42');
  });

  it('still signs plain nested data, including a null-prototype object', () => {
    const bare = Object.assign(Object.create(null) as Record<string, unknown>, { level: 3 });
    const { token } = issuer.issue('player-42', { stats: { wins: 2, tags: ['a', { b: 1 }] }, bare });
    expect(decodePart(token, 1)).toMatchObject({ stats: { wins: 2, tags: ['a', { b: 1 }] }, bare: { level: 3 } });
  });
});

describe('header and payload segments are read in one spelling only', () => {
  const { key } = setup();
  const resign = (input: string) => `${input}.${createHmac('sha256', key.keyObject).update(input).digest('base64url')}`;
  const [header, payload] = issuer.issue('player-42').token.split('.') as [string, string];

  it('refuses a correctly signed token whose payload has padding, stray characters or spare bits set', () => {
    expect(validator.validate(resign(`${header}.${payload}`)).ok).toBe(true);
    for (const odd of [`${payload}=`, `${payload.slice(0, 10)}+${payload.slice(10)}`, `${payload.slice(0, 10)}\u0141${payload.slice(10)}`, `${payload}A`]) {
      expect(validator.validate(resign(`${header}.${odd}`))).toEqual({ ok: false, reason: 'malformed' });
    }
    expect(validator.validate(resign(`${header}=.${payload}`))).toEqual({ ok: false, reason: 'malformed' });
  });

  it('refuses a payload that is not valid UTF-8 or starts with a byte order mark', () => {
    const text = Buffer.from(payload, 'base64url').toString('utf8');
    const broken = Buffer.from(text.replace('player-42', 'player-\u0000'), 'utf8');
    broken[broken.indexOf(0)] = 0xff;
    expect(validator.validate(resign(`${header}.${broken.toString('base64url')}`))).toEqual({ ok: false, reason: 'malformed' });
    const bom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text)]).toString('base64url');
    expect(validator.validate(resign(`${header}.${bom}`))).toEqual({ ok: false, reason: 'malformed' });
  });
});
