/**
 * The session contract: one suite, run against the in-memory provider and against a real
 * redis-server (started by test/support/global-setup.ts).
 */
import { afterEach, beforeEach, describe, expect, inject, it, vi } from 'vitest';
import { PortcullisError, sessionKey, TokenError, udpSessionId, type CredentialsRevoked } from '@portcullis/core';
import { createClient } from '@keyv/redis';
import { isSessionToken } from '@portcullis/protocol';
import { UdpKeyring } from '../src/key/udp-keyring.js';
import { SessionPairStore } from '../src/session/session-pair-store.js';
import { openTokenWith } from '../src/session/token-seal.js';
import { claimsOf, createHarness, redisTopologies, type ProviderName, type SessionHarness } from './support/session-harness.js';

const redisUrl = inject('redisUrl');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const MINUTE = 60_000;

function sessionContract(provider: ProviderName, env: Readonly<Record<string, string>> = {}): void {
  let h: SessionHarness;
  let events: CredentialsRevoked[];

  beforeEach(async () => {
    h = await createHarness({ provider, redisUrl, env });
    events = [];
    h.sessions.onRevocation((event) => {
      if (event.kind === 'revoked') events.push(event);
    });
  });
  afterEach(async () => {
    vi.useRealTimers();
    await h.close();
  });

  const login = (sub = 'alice', claims: Record<string, unknown> = { name: 'Alice', role: 'admin' }) => h.issuer.issueLoginPair(sub, claims);

  describe('upgrade', () => {
    it('exchanges a JWT for a session pair carrying the principal', async () => {
      const before = Date.now();
      const session = await h.sessions.upgrade(login().accessToken);
      expect(isSessionToken(session.accessToken) && isSessionToken(session.refreshToken)).toBe(true);
      expect(session.accessToken).not.toBe(session.refreshToken);
      expect(session.accessExpiration.getTime() - before).toBeGreaterThanOrEqual(60 * MINUTE);
      expect(session.accessExpiration.getTime() - before).toBeLessThan(61 * MINUTE);
      expect(session.refreshExpiration.getTime() - before).toBeGreaterThanOrEqual(7 * 24 * 60 * MINUTE);
      const principal = await h.sessions.validate(session.accessToken);
      expect(principal).toMatchObject({ id: 'alice', name: 'Alice', roles: ['admin'], via: 'session' });
    });

    it('lets exactly one of 50 concurrent upgrades of one JWT win', async () => {
      const jwt = login().accessToken;
      const results = await Promise.allSettled(Array.from({ length: 50 }, () => h.sessions.upgrade(jwt)));
      const won = results.filter((r) => r.status === 'fulfilled');
      const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
      expect(won).toHaveLength(1);
      expect(lost).toHaveLength(49);
      for (const failure of lost) expect(failure.reason).toMatchObject({ name: 'TokenError', reason: 'revoked' });
      expect(await h.sessions.revokeAllFor('alice')).toBe(1);
    });

    it('invalidates the upgraded JWT everywhere and refuses a second upgrade', async () => {
      const pair = login();
      const other = login();
      await h.sessions.upgrade(pair.accessToken);
      expect(await h.sessions.isJwtInvalidated(claimsOf(h, pair.accessToken))).toBe(true);
      expect(await h.sessions.isJwtInvalidated(claimsOf(h, other.accessToken))).toBe(false);
      await expect(h.sessions.upgrade(pair.accessToken)).rejects.toMatchObject({ reason: 'revoked' });
    });

    it('refuses a refresh token, a forged token and garbage with the validator reason', async () => {
      await expect(h.sessions.upgrade(login().refreshToken)).rejects.toMatchObject({ reason: 'wrong_type' });
      const jwt = login().accessToken;
      await expect(h.sessions.upgrade(`${jwt.slice(0, -2)}AA`)).rejects.toBeInstanceOf(TokenError);
      await expect(h.sessions.upgrade('not a token')).rejects.toMatchObject({ reason: 'malformed' });
    });
  });

  describe('validate and revoke', () => {
    it('answers undefined for an unknown token and after revocation, and tells listeners', async () => {
      const pair = login();
      const session = await h.sessions.upgrade(pair.accessToken);
      expect(await h.sessions.validate('3b241101-e2bb-4255-8caf-4136c566a962;session')).toBeUndefined();
      expect(await h.sessions.validate(session.accessToken)).toBeDefined();
      expect(h.sessions.peek(session.accessToken)).toBeDefined();
      expect(await h.sessions.revoke(session.accessToken)).toBe(true);
      expect(h.sessions.peek(session.accessToken)).toBeUndefined();
      expect(await h.sessions.validate(session.accessToken)).toBeUndefined();
      await expect(h.sessions.refresh(session.refreshToken)).rejects.toMatchObject({ reason: 'revoked' });
      // The upgrade itself announced the spent JWT, so sockets that connected with it close.
      expect(events).toEqual([{ kind: 'revoked', sessionKeys: [], jtis: [pair.accessJti] }, { kind: 'revoked', sessionKeys: [sessionKey(session.accessToken)], jtis: [] }]);
      expect(await h.sessions.revoke(session.accessToken)).toBe(false);
    });

    it('has dropped a revoked session from its caches by the time it tells a listener', async () => {
      const session = await h.sessions.upgrade(login().accessToken);
      expect(await h.sessions.validate(session.accessToken)).toBeDefined();
      expect(h.sessions.peek(session.accessToken)).toBeDefined(); // in the near cache until the revocation
      const seenByListener: unknown[] = [];
      const off = h.sessions.onRevocation((event) => {
        if (event.kind === 'revoked' && event.sessionKeys.length > 0) seenByListener.push(h.sessions.peek(session.accessToken));
      });
      await h.sessions.revoke(session.accessToken);
      off();
      expect(seenByListener).toEqual([undefined]);
    });

    it('revokes a pair through its refresh token and through revokePair', async () => {
      const first = await h.sessions.upgrade(login().accessToken);
      const second = await h.sessions.upgrade(login().accessToken);
      expect(await h.sessions.revoke(first.refreshToken)).toBe(true);
      expect(await h.sessions.validate(first.accessToken)).toBeUndefined();
      expect(await h.sessions.revokePair(second.accessToken)).toBe(true);
      expect(await h.sessions.validate(second.accessToken)).toBeUndefined();
      await expect(h.sessions.refresh(second.refreshToken)).rejects.toBeInstanceOf(TokenError);
      expect(await h.sessions.revokePair(second.refreshToken)).toBe(false);
    });

    it('logs out a JWT with its whole login family', async () => {
      const pair = login();
      expect(await h.sessions.revoke(pair.accessToken)).toBe(true);
      expect(await h.sessions.isJwtInvalidated(claimsOf(h, pair.accessToken))).toBe(true);
      await expect(h.sessions.refresh(pair.refreshToken)).rejects.toMatchObject({ reason: 'revoked' });
      expect(events.at(-1)?.jtis).toEqual([claimsOf(h, pair.accessToken).jti]);
    });

    it('revokes every credential of one principal and nobody else', async () => {
      const a1 = await h.sessions.upgrade(login('alice').accessToken);
      const a2 = await h.sessions.upgrade(login('alice').accessToken);
      const b = await h.sessions.upgrade(login('bob').accessToken);
      const aliceJwt = login('alice');
      await h.sessions.validate(a1.accessToken);
      expect(await h.sessions.revokeAllFor('alice')).toBe(2);
      expect(await h.sessions.validate(a1.accessToken)).toBeUndefined();
      expect(await h.sessions.validate(a2.accessToken)).toBeUndefined();
      expect(await h.sessions.validate(b.accessToken)).toMatchObject({ id: 'bob' });
      expect(await h.sessions.isJwtInvalidated(claimsOf(h, aliceJwt.accessToken))).toBe(true);
      await expect(h.sessions.refresh(aliceJwt.refreshToken)).rejects.toMatchObject({ reason: 'revoked' });
      expect(events.at(-1)).toMatchObject({ principalId: 'alice' });
      expect([...(events.at(-1)?.sessionKeys ?? [])].sort()).toEqual([a1.accessToken, a2.accessToken].map(sessionKey).sort());
    });

    it("forgets a pair's UDP sid with the pair: revoked through either token, by revokePair, with its principal or its login, or refreshed", async () => {
      const sidOf = (session: { accessToken: string }) => udpSessionId(session.accessToken).toString('hex');
      const indexed = async (session: { accessToken: string }) => (await h.stores.cache.get('udp-session', sidOf(session))) !== undefined;
      const byAccess = await h.sessions.upgrade(login().accessToken);
      const byRefresh = await h.sessions.upgrade(login().accessToken);
      const byPair = await h.sessions.upgrade(login().accessToken);
      const refreshed = await h.sessions.upgrade(login().accessToken);
      const ofPrincipal = await h.sessions.upgrade(login('carol').accessToken);
      const family = login('dave');
      const ofLogin = await h.sessions.upgrade(family.accessToken);
      const all = [byAccess, byRefresh, byPair, refreshed, ofPrincipal, ofLogin];
      for (const session of all) {
        expect(await indexed(session)).toBe(true);
        expect(await h.sessions.validateSid(sidOf(session))).toBeDefined();
      }
      expect(await h.sessions.revoke(byAccess.accessToken)).toBe(true);
      expect(await h.sessions.revoke(byRefresh.refreshToken)).toBe(true);
      expect(await h.sessions.revokePair(byPair.accessToken)).toBe(true);
      const next = await h.sessions.refresh(refreshed.refreshToken);
      if (next.kind !== 'session') throw new Error('expected a session pair');
      expect(await h.sessions.revokeAllFor('carol')).toBe(1);
      expect(await h.sessions.revoke(family.refreshToken)).toBe(true);
      for (const session of all) {
        expect(await indexed(session)).toBe(false);
        expect(await h.sessions.validateSid(sidOf(session))).toBeUndefined();
      }
      expect(await indexed(next.session)).toBe(true);
      expect(await h.sessions.validateSid(sidOf(next.session))).toMatchObject({ id: 'alice' });
    });

    it('reads many sessions by UDP sid at once (near-cache renewals), in order, an unknown or revoked sid answering nothing', async () => {
      const sidOf = (session: { accessToken: string }) => udpSessionId(session.accessToken).toString('hex');
      const pairs = new SessionPairStore(h.stores.cache, { accessMs: 3_600_000, refreshMs: 86_400_000 }, new UdpKeyring(Buffer.alloc(32, 1)));
      const kept = await h.sessions.upgrade(login('erin').accessToken);
      const gone = await h.sessions.upgrade(login('frank').accessToken);
      const other = await h.sessions.upgrade(login('gina').accessToken);
      await h.sessions.revoke(gone.accessToken);
      const records = await pairs.findAccessBySidMany([sidOf(kept), '0'.repeat(32), sidOf(gone), sidOf(other)]);
      expect(records.map((r) => r?.principal.id)).toEqual(['erin', undefined, undefined, 'gina']);
      expect(await pairs.findAccessBySidMany([])).toEqual([]);
    });
  });

  describe('refresh', () => {
    it('rotates a session pair: the old pair stops working', async () => {
      const old = await h.sessions.upgrade(login().accessToken);
      events.length = 0;
      const result = await h.sessions.refresh(old.refreshToken);
      if (result.kind !== 'session') throw new Error('expected a session pair');
      expect(await h.sessions.validate(result.session.accessToken)).toMatchObject({ id: 'alice', name: 'Alice' });
      expect(await h.sessions.validate(old.accessToken)).toBeUndefined();
      await expect(h.sessions.refresh(old.accessToken)).rejects.toBeInstanceOf(TokenError);
      expect(events).toEqual([
        { kind: 'revoked', sessionKeys: [sessionKey(old.accessToken)], jtis: [], successors: [{ from: sessionKey(old.accessToken), sealed: expect.any(String) }] },
      ]);
      // Only a holder of the old access token reads the successor; the event never carries it.
      const [successor] = events[0]?.successors ?? [];
      expect(successor!.sealed).toHaveLength(43);
      expect(openTokenWith('access successor', old.accessToken, successor!.sealed)).toBe(result.session.accessToken);
      expect(openTokenWith('access successor', result.session.refreshToken, successor!.sealed)).toBeUndefined();
      expect(JSON.stringify(events)).not.toContain(result.session.accessToken.split(';')[0]);
    });

    it('takes a used session refresh token presented again for theft: it revokes the successor (grace 0)', async () => {
      const old = await h.sessions.upgrade(login().accessToken);
      const result = await h.sessions.refresh(old.refreshToken);
      if (result.kind !== 'session') throw new Error('expected a session pair');
      events.length = 0;
      await expect(h.sessions.refresh(old.refreshToken)).rejects.toMatchObject({ reason: 'revoked' });
      expect(await h.sessions.validate(result.session.accessToken)).toBeUndefined();
      expect(events).toEqual([{ kind: 'revoked', sessionKeys: [sessionKey(result.session.accessToken)], jtis: [] }]);
      await expect(h.sessions.refresh(result.session.refreshToken)).rejects.toMatchObject({ reason: 'revoked' });
    });

    it('lets one of 20 concurrent refreshes of one session refresh token rotate; with grace 0 the others are reuse and end it', async () => {
      const session = await h.sessions.upgrade(login().accessToken);
      const results = await Promise.allSettled(Array.from({ length: 20 }, () => h.sessions.refresh(session.refreshToken)));
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      expect(await h.sessions.revokeAllFor('alice')).toBe(0);
    });

    describe('within refresh-reuse-grace-seconds', () => {
      let g: SessionHarness;
      const keyPrefix = `grace-${provider}-${Date.now()}`;
      beforeEach(async () => {
        g = await createHarness({ provider, redisUrl, security: { 'refresh-reuse-grace-seconds': 2 } }, keyPrefix);
      });
      const dumpCache = async (): Promise<string> => {
        if (provider === 'inmemory') {
          const entries = (g.stores.cache as unknown as { entries: Map<string, { value: unknown }> }).entries;
          return JSON.stringify([...entries].map(([key, entry]) => [key, entry.value instanceof Set ? [...entry.value] : entry.value]));
        }
        const admin = createClient({ url: redisUrl! });
        await admin.connect();
        const keys = await admin.keys(`${keyPrefix}:*`);
        const values = await Promise.all(keys.map(async (key) => ((await admin.type(key)) === 'set' ? admin.sMembers(key) : admin.get(key))));
        await admin.close();
        return JSON.stringify([keys, values]);
      };
      afterEach(async () => {
        vi.useRealTimers();
        await g.close();
      });

      it('answers 20 concurrent refreshes of one session refresh token with the same successor and revokes nothing', async () => {
        const session = await g.sessions.upgrade(g.issuer.issueLoginPair('dora', { name: 'Dora' }).accessToken);
        const results = await Promise.all(Array.from({ length: 20 }, () => g.sessions.refresh(session.refreshToken)));
        const pairs = new Set(results.map((r) => (r.kind === 'session' ? `${r.session.accessToken} ${r.session.refreshToken}` : 'login')));
        expect(pairs.size).toBe(1);
        const [first] = results;
        if (first?.kind !== 'session') throw new Error('expected a session pair');
        expect(first.session.principal).toMatchObject({ id: 'dora', name: 'Dora' });
        expect(await g.sessions.validate(first.session.accessToken)).toMatchObject({ id: 'dora' });
        expect(await g.sessions.revokeAllFor('dora')).toBe(1);
      });

      it('answers a repeated JWT refresh with the identical login pair and keeps the login', async () => {
        const pair = g.issuer.issueLoginPair('erin', { name: 'Erin' });
        const [a, b] = await Promise.all([g.sessions.refresh(pair.refreshToken), g.sessions.refresh(pair.refreshToken)]);
        if (a.kind !== 'login' || b.kind !== 'login') throw new Error('expected login pairs');
        expect(b.pair.accessToken).toBe(a.pair.accessToken);
        expect(b.pair.refreshToken).toBe(a.pair.refreshToken);
        expect(await g.sessions.refresh(a.pair.refreshToken)).toMatchObject({ kind: 'login' });
      });

      it('past the grace takes the reuse for theft: a session successor ends, a JWT login ends', async () => {
        const session = await g.sessions.upgrade(g.issuer.issueLoginPair('finn', { name: 'Finn' }).accessToken);
        const pair = g.issuer.issueLoginPair('finn', { name: 'Finn' });
        const next = await g.sessions.refresh(session.refreshToken);
        const nextLogin = await g.sessions.refresh(pair.refreshToken);
        if (next.kind !== 'session' || nextLogin.kind !== 'login') throw new Error('expected both kinds');
        await sleep(2100);
        await expect(g.sessions.refresh(session.refreshToken)).rejects.toMatchObject({ code: 'invalid_token', reason: 'revoked' });
        expect(await g.sessions.validate(next.session.accessToken)).toBeUndefined();
        await expect(g.sessions.refresh(pair.refreshToken)).rejects.toMatchObject({ code: 'invalid_token' });
        await expect(g.sessions.refresh(nextLogin.pair.refreshToken)).rejects.toMatchObject({ reason: 'revoked' });
      });

      it('keeps no successor a reader of the cache could use: the kept successor is sealed under the used token', async () => {
        const session = await g.sessions.upgrade(g.issuer.issueLoginPair('gail', { name: 'Gail' }).accessToken);
        const next = await g.sessions.refresh(session.refreshToken);
        if (next.kind !== 'session') throw new Error('expected a session pair');
        const dump = await dumpCache();
        expect(dump).toContain('refresh-successor');
        expect(dump).not.toContain(next.session.accessToken);
        expect(dump).not.toContain(next.session.refreshToken);
      });
    });

    it('refuses a refresh token of another principal when the caller names its own, using nothing up', async () => {
      const session = await h.sessions.upgrade(login().accessToken);
      await expect(h.sessions.refresh(session.refreshToken, 'mallory')).rejects.toMatchObject({ code: 'forbidden' });
      expect(await h.sessions.refresh(session.refreshToken, 'alice')).toMatchObject({ kind: 'session' });
    });

    it("refuses another principal's already used refresh token without treating it as theft: the successor stays", async () => {
      const session = await h.sessions.upgrade(login().accessToken);
      const next = await h.sessions.refresh(session.refreshToken, 'alice');
      if (next.kind !== 'session') throw new Error('expected a session pair');
      const before = events.length;
      await expect(h.sessions.refresh(session.refreshToken, 'mallory')).rejects.toMatchObject({ code: 'forbidden' });
      expect(events.length).toBe(before);
      expect(await h.sessions.validate(next.session.accessToken)).toMatchObject({ id: 'alice' });
      expect(await h.sessions.refresh(next.session.refreshToken, 'alice')).toMatchObject({ kind: 'session' });
    });

    it('rotates a JWT refresh token within its family, and reuse revokes the family', async () => {
      const first = login('carol', { name: 'Carol', roles: ['player'] });
      const upgraded = await h.sessions.upgrade(first.accessToken);
      const result = await h.sessions.refresh(first.refreshToken);
      if (result.kind !== 'login') throw new Error('expected a login pair');
      const next = result.pair;
      expect(next.familyId).toBe(first.familyId);
      expect(claimsOf(h, next.accessToken)).toMatchObject({ sub: 'carol', name: 'Carol', roles: ['player'], fam: first.familyId });
      expect(await h.sessions.isJwtInvalidated(claimsOf(h, next.accessToken))).toBe(false);

      await expect(h.sessions.refresh(first.refreshToken)).rejects.toMatchObject({ reason: 'revoked' });
      expect(await h.sessions.isJwtInvalidated(claimsOf(h, next.accessToken))).toBe(true);
      await expect(h.sessions.refresh(next.refreshToken)).rejects.toMatchObject({ reason: 'revoked' });
      await expect(h.sessions.upgrade(next.accessToken)).rejects.toMatchObject({ reason: 'revoked' });
      expect(await h.sessions.validate(upgraded.accessToken)).toBeUndefined();
      expect(events.at(-1)?.sessionKeys).toEqual([sessionKey(upgraded.accessToken)]);
    });

    it('never accepts an access token as a refresh token', async () => {
      await expect(h.sessions.refresh(login().accessToken)).rejects.toMatchObject({ reason: 'wrong_type' });
    });
  });

  describe('format check', () => {
    const token = '3b241101-e2bb-4255-8caf-4136c566a962;session';
    const malformed: unknown[] = [
      '', ';session', token.toUpperCase().replace(';SESSION', ';session'), token.replace('-4255-', '-1255-'), token.slice(0, 36),
      `${token}\n`, ` ${token}`, `${token};session`, '../../../etc/passwd;session', `${'a'.repeat(10_000)};session`, `${token.slice(0, 35)}*;session`,
      null, 42, { toString: () => token },
    ];

    it('refuses malformed session tokens without touching the store', async () => {
      const cache = h.stores.cache;
      const methods = ['get', 'getMany', 'set', 'delete', 'setIfAbsent', 'take', 'write', 'takeMembers', 'increment', 'remainingMs'] as const;
      const spies = methods.map((m) => vi.spyOn(cache, m));
      for (const bad of malformed as string[]) {
        expect(await h.sessions.validate(bad)).toBeUndefined();
        expect(h.sessions.peek(bad)).toBeUndefined();
        expect(await h.sessions.revoke(bad)).toBe(false);
        expect(await h.sessions.revokePair(bad)).toBe(false);
        await expect(h.sessions.refresh(bad)).rejects.toBeInstanceOf(TokenError);
      }
      for (const spy of spies) expect(spy).not.toHaveBeenCalled();
    });
  });

  if (provider === 'inmemory') {
    describe('expiry (fake timers)', () => {
      it('expires the access token after session:access-minutes and the refresh token after session:refresh-days', async () => {
        vi.useFakeTimers({ now: Date.now() });
        const session = await h.sessions.upgrade(login().accessToken);
        vi.advanceTimersByTime(59 * MINUTE);
        expect(await h.sessions.validate(session.accessToken)).toBeDefined();
        vi.advanceTimersByTime(2 * MINUTE);
        expect(await h.sessions.validate(session.accessToken)).toBeUndefined();
        const result = await h.sessions.refresh(session.refreshToken);
        if (result.kind !== 'session') throw new Error('expected a session pair');
        vi.advanceTimersByTime(7 * 24 * 60 * MINUTE + MINUTE);
        await expect(h.sessions.refresh(result.session.refreshToken)).rejects.toMatchObject({ reason: 'revoked' });
      });
    });
  } else {
    describe('expiry (short store TTLs)', () => {
      it('expires the access token, then the refresh token, by the store TTL', async () => {
        const short = await createHarness({ provider, redisUrl, env, stores: { sessionLifetimesMs: { access: 150, refresh: 500 } } });
        try {
          const session = await short.sessions.upgrade(short.issuer.issueLoginPair('dave').accessToken);
          expect(await short.sessions.validate(session.accessToken)).toBeDefined();
          await sleep(250);
          expect(await short.sessions.validate(session.accessToken)).toBeUndefined();
          const result = await short.sessions.refresh(session.refreshToken);
          if (result.kind !== 'session') throw new Error('expected a session pair');
          await sleep(600);
          await expect(short.sessions.refresh(result.session.refreshToken)).rejects.toMatchObject({ reason: 'revoked' });
        } finally {
          await short.close();
        }
      });
    });
  }

  it('fails closed with a typed error, never a crash, when the store refuses', async () => {
    // A check reads alone (get) or gathered with the other misses of its turn (getMany, on Redis).
    vi.spyOn(h.stores.cache, 'get').mockRejectedValueOnce(new PortcullisError('unavailable', 'session store unavailable'));
    vi.spyOn(h.stores.cache, 'getMany').mockRejectedValueOnce(new PortcullisError('unavailable', 'session store unavailable'));
    await expect(h.sessions.validate('3b241101-e2bb-4255-8caf-4136c566a962;session')).rejects.toMatchObject({ code: 'unavailable' });
  });
}

describe('session contract: inmemory', () => sessionContract('inmemory'));
describe.skipIf(!redisUrl)(redisUrl ? 'session contract: redis' : 'session contract: redis — SKIPPED, redis-server not found', () => {
  for (const topology of redisTopologies()) describe(topology.name, () => sessionContract('redis', topology.env));
});
