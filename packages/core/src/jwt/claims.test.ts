import 'reflect-metadata';
import { describe, expect, it } from 'vitest';
import { setup } from '../../test/support/jwt-kit.js';
import type { JwtClaims } from '../contracts/tokens.js';
import { ClaimTypes, INBOUND_CLAIM_MAP, mapInboundClaims, principalFromClaims, principalId, principalName } from './claims.js';

const mapped = setup().config.security;
const unmapped = setup({ SVC__SECURITY__JWT__MAP_INBOUND_CLAIMS: 'false' }).config.security;
const base = { iss: 'portcullis', aud: 'portcullis', jti: 'j', iat: 1, exp: 2 };
const claims = (extra: Record<string, unknown>): JwtClaims => ({ ...base, sub: 'player-42', ...extra }) as JwtClaims;

describe('inbound claim map', () => {
  it('uses the long claim-type URIs of ASP.NET’s JwtSecurityTokenHandler', () => {
    expect(INBOUND_CLAIM_MAP.sub).toBe('http://schemas.xmlsoap.org/ws/2005/05/identity/claims/nameidentifier');
    expect(INBOUND_CLAIM_MAP.name).toBe('http://schemas.xmlsoap.org/ws/2005/05/identity/claims/name');
    expect(INBOUND_CLAIM_MAP.email).toBe('http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress');
    expect(INBOUND_CLAIM_MAP.role).toBe('http://schemas.microsoft.com/ws/2008/06/identity/claims/role');
    expect(INBOUND_CLAIM_MAP.roles).toBe(ClaimTypes.Role);
    expect(INBOUND_CLAIM_MAP.given_name).toBe('http://schemas.xmlsoap.org/ws/2005/05/identity/claims/givenname');
    expect(INBOUND_CLAIM_MAP.family_name).toBe('http://schemas.xmlsoap.org/ws/2005/05/identity/claims/surname');
    expect(INBOUND_CLAIM_MAP.iss).toBeUndefined();
    expect(INBOUND_CLAIM_MAP.constructor).toBeUndefined();
  });
});

describe('principalFromClaims with jwt:map-inbound-claims true (default)', () => {
  const p = principalFromClaims(claims({ name: 'alice', email: 'a@example.com', given_name: 'Al', family_name: 'Ice', role: 'admin', guild: 'north' }), mapped);

  it('renames registered names to URIs and keeps iss, aud, jti and custom claims', () => {
    expect(p.claims).toEqual({
      [ClaimTypes.NameIdentifier]: 'player-42',
      [ClaimTypes.Name]: 'alice',
      [ClaimTypes.Email]: 'a@example.com',
      [ClaimTypes.GivenName]: 'Al',
      [ClaimTypes.Surname]: 'Ice',
      [ClaimTypes.Role]: 'admin',
      guild: 'north',
      ...base,
    });
  });

  it('takes id from sub (the name-identifier claim), name from the name claim and roles from role', () => {
    expect(p).toMatchObject({ id: 'player-42', name: 'alice', roles: ['admin'], via: 'jwt' });
    expect(principalId(p)).toBe('player-42');
    expect(principalName(p)).toBe('alice');
    expect(Object.isFrozen(p) && Object.isFrozen(p.roles) && Object.isFrozen(p.claims)).toBe(true);
  });
});

describe('principalFromClaims with jwt:map-inbound-claims false', () => {
  it('keeps the claims exactly as issued', () => {
    const issued = claims({ name: 'alice', role: ['admin', 'player'] });
    const p = principalFromClaims(issued, unmapped, 'session');
    expect(p.claims).toEqual(issued);
    expect(p.claims).not.toHaveProperty(ClaimTypes.NameIdentifier);
    expect(p).toMatchObject({ id: 'player-42', name: 'alice', roles: ['admin', 'player'], via: 'session' });
  });
});

describe('roles', () => {
  it.each([
    ['a string role', { role: 'admin' }, ['admin']],
    ['a role array', { role: ['admin', 'player'] }, ['admin', 'player']],
    ['a roles array', { roles: ['player'] }, ['player']],
    ['role and roles, merged without duplicates', { role: 'admin', roles: ['admin', 'player'] }, ['admin', 'player']],
    ['non-string entries, ignored', { role: ['admin', 7, null, { x: 1 }] }, ['admin']],
    ['no role at all', {}, []],
  ])('reads %s, mapped or not', (_name, extra, expected) => {
    expect(principalFromClaims(claims(extra), mapped).roles).toEqual(expected);
    expect(principalFromClaims(claims(extra), unmapped).roles).toEqual(expected);
  });

  it('merges role and roles into one role claim when mapped', () => {
    expect(mapInboundClaims({ role: 'admin', roles: ['admin', 'player'] })).toEqual({ [ClaimTypes.Role]: ['admin', 'player'] });
  });
});

describe('jwt:name-claim', () => {
  const byUsername = (map: string) => setup({ SVC__SECURITY__JWT__NAME_CLAIM: 'username', SVC__SECURITY__JWT__MAP_INBOUND_CLAIMS: map }).config.security;

  it('chooses the claim the identity name reads, mapped or not', () => {
    for (const security of [byUsername('true'), byUsername('false')]) {
      const p = principalFromClaims(claims({ name: 'Alice Liddell', username: 'alice' }), security);
      expect(p.name).toBe('alice');
      expect(principalName(p)).toBe('alice');
    }
  });

  it('falls back to the name claim when the chosen claim is absent', () => {
    expect(principalFromClaims(claims({ name: 'alice' }), byUsername('true')).name).toBe('alice');
    expect(principalFromClaims(claims({ name: 'alice' }), byUsername('false')).name).toBe('alice');
  });

  it('accepts a long claim type as the name claim when mapping is on', () => {
    const security = setup({ SVC__SECURITY__JWT__NAME_CLAIM: ClaimTypes.Email }).config.security;
    expect(principalFromClaims(claims({ name: 'alice', email: 'a@example.com' }), security).name).toBe('a@example.com');
  });

  it('leaves the name undefined when there is no name claim', () => {
    const p = principalFromClaims(claims({}), mapped);
    expect(p.name).toBeUndefined();
    expect(principalName(p)).toBeUndefined();
  });
});

describe('mapInboundClaims collisions and hostile names', () => {
  it('lets sub own the name-identifier type; nameid keeps its issued name', () => {
    const out = mapInboundClaims({ nameid: 'spoof', sub: 'player-42' });
    expect(out[ClaimTypes.NameIdentifier]).toBe('player-42');
    expect(out.nameid).toBe('spoof');
    expect(principalFromClaims(claims({ nameid: 'spoof' }), mapped).id).toBe('player-42');
  });

  it('lets name win over unique_name, and a claim literally named by a URI give way to sub', () => {
    expect(mapInboundClaims({ unique_name: 'u', name: 'n' })).toEqual({ [ClaimTypes.Name]: 'n', unique_name: 'u' });
    expect(mapInboundClaims({ unique_name: 'u' })).toEqual({ [ClaimTypes.Name]: 'u' });
    expect(mapInboundClaims({ [ClaimTypes.NameIdentifier]: 'spoof', sub: 'player-42' })).toEqual({ [ClaimTypes.NameIdentifier]: 'player-42' });
  });

  it('keeps a __proto__ claim an own property without changing any prototype', () => {
    const out = mapInboundClaims(JSON.parse('{"__proto__":{"polluted":true},"sub":"p"}') as Record<string, unknown>);
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(Object.hasOwn(out, '__proto__')).toBe(true);
    expect((out as Record<string, unknown>).polluted).toBeUndefined();
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
