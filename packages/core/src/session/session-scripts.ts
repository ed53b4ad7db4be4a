/**
 * Upgrade, refresh and revoke as one Lua script each, for a store where one server holds
 * every entry (Redis `single` and `sentinel`, see `CacheStore.scripts`): one round trip, and
 * Redis runs the script as one step, so the check, the one-winner claim and the writes cannot
 * interleave with any other operation. Each script does what the step-by-step path of
 * `SessionLifecycle` does (which memory and a Redis Cluster keep), in the same order, on the
 * same entries and in keyv's envelope. Upgrade and revoke publish their revocation event from
 * the script too, so the event is on its way to the fleet before the caller has its answer, as
 * when it is published on its own; a refresh's event carries the new access token sealed under
 * the old one, which only this process can open, so it is published after the script. Trimming to
 * `session:max-per-principal` (rare: only a principal over the limit) stays in TypeScript.
 */
import type { Principal } from '../contracts/principal.js';
import type { JwtClaims } from '../contracts/tokens.js';
import { encodeEntry } from '../store/cache-entry.js';
import type { CacheScripts } from '../store/cache-store.js';
import type { ScriptedBroadcast } from '../store/revocation-bus.js';
import { RedisScript } from '../store/redis-script.js';
import { epochSecondsNow } from '../store/store-epoch.js';
import type { JwtInvalidation } from './jwt-invalidation.js';
import type { LoginInventory } from './login-inventory.js';
import type { PairDraft, SessionPairStore } from './session-pair-store.js';
import type { RefreshRecord } from './session-record.js';

/**
 * Shared by the scripts. `ARGV[1]` is the key prefix (see `CacheScripts`). `lineage` decides as
 * `JwtInvalidation.isLineageRevoked` does and reads the login's record with it, in one `MGET`;
 * `touchLogin` is `LoginInventory.touch` on that record. Each `redis.call` costs a script a few
 * microseconds, so reads go together and a set's TTL takes one `PEXPIRE` when it can.
 */
const PRELUDE = `
local prefix = ARGV[1]
local function key(ns, id) return prefix .. ':' .. ns .. ':' .. id end
local function valueOf(raw)
  if not raw then return nil end
  local ok, entry = pcall(cjson.decode, raw)
  if not ok or type(entry) ~= 'table' then return nil end
  return entry.value
end
-- The set's TTL becomes the longer of its own and ttl: NX gives a set without one (a new set) its
-- first, GT only ever extends. The flag that most likely applies is tried first ('NX' when the set is likely new).
local function addMember(k, member, ttl, first)
  redis.call('SADD', k, member)
  if redis.call('PEXPIRE', k, ttl, first) == 0 then redis.call('PEXPIRE', k, ttl, first == 'NX' and 'GT' or 'NX') end
end
local function unindex(principal, fam, refresh)
  if principal then redis.call('SREM', key('principal-sessions', principal), refresh) end
  if fam then redis.call('SREM', key('family-sessions', fam), refresh) end
end
-- Answers the verdict and, when it is 'ok' and there is a family, the login's stored entry.
local function lineage(iat, principal, fam)
  local keys = { key('principal-cutoff', principal), key('store-epoch', '') }
  if fam then keys[3], keys[4] = key('revoked-family', fam), key('login', fam) end
  local found = redis.call('MGET', unpack(keys))
  local cutoff = valueOf(found[1])
  if type(cutoff) == 'number' and iat <= cutoff then return 'revoked' end
  if fam and found[3] then return 'revoked' end
  local epoch = valueOf(found[2])
  if type(epoch) ~= 'number' then return 'no-epoch' end
  if iat < epoch then return 'revoked' end
  return 'ok', fam and found[4] or nil
end
local function touchLogin(fam, raw, upgraded, now, ttl)
  local login = valueOf(raw)
  if type(login) ~= 'table' or type(login.principalId) ~= 'string' then return end
  login.refreshedAt = now
  if upgraded then login.upgraded = true end
  redis.call('SET', key('login', fam), cjson.encode({ value = login, expires = now + ttl }), 'PX', ttl)
  addMember(key('principal-logins', login.principalId), fam, ttl, 'GT')
end
local B64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'
-- The UDP sid (hex) of the session whose access key is access: the first 16 bytes of the digest
-- the key encodes (udpSessionIdOfKey). A key that is not base64url names no sid.
local function sidOf(access)
  if not string.find(access, '^' .. string.rep('[%w_%-]', 22)) then return '' end
  local bits, held, hex = 0, 0, {}
  for i = 1, 22 do
    bits = bits * 64 + string.find(B64URL, string.sub(access, i, i), 1, true) - 1
    held = held + 6
    if held >= 8 and #hex < 16 then
      held = held - 8
      local byte = math.floor(bits / 2 ^ held)
      bits = bits - byte * 2 ^ held
      hex[#hex + 1] = string.format('%02x', byte)
    end
  end
  return table.concat(hex)
end
`;

/**
 * ARGV: 2 iat, 3 sub, 4 fam or '', 5 jti, 6 used-jwt entry, 7 its TTL, 8 access key, 9 access
 * entry, 10 access TTL, 11 sid hex, 12 udp-session entry, 13 refresh key, 14 refresh entry,
 * 15 refresh TTL, 16 now (ms), 17 login TTL, 18 principal id, 19 revocation channel, 20 the
 * event that closes the connections authenticated with the JWT.
 * Answers `{'ok', pairs the principal holds}`, `{'revoked'}`, `{'used'}` or `{'no-epoch'}`.
 */
const UPGRADE = new RedisScript(`${PRELUDE}
local fam = ARGV[4] ~= '' and ARGV[4] or nil
local verdict, login = lineage(tonumber(ARGV[2]), ARGV[3], fam)
if verdict ~= 'ok' then return { verdict } end
if not redis.call('SET', key('used-jwt', ARGV[5]), ARGV[6], 'PX', ARGV[7], 'NX') then return { 'used' } end
redis.call('SET', key('session', ARGV[8]), ARGV[9], 'PX', ARGV[10])
redis.call('SET', key('udp-session', ARGV[11]), ARGV[12], 'PX', ARGV[10])
redis.call('SET', key('session-refresh', ARGV[13]), ARGV[14], 'PX', ARGV[15])
addMember(key('principal-sessions', ARGV[18]), ARGV[13], ARGV[15], 'NX')
if fam then
  addMember(key('family-sessions', fam), ARGV[13], ARGV[15], 'NX')
  touchLogin(fam, login, true, tonumber(ARGV[16]), tonumber(ARGV[17]))
end
redis.call('PUBLISH', ARGV[19], ARGV[20])
return { 'ok', redis.call('SCARD', key('principal-sessions', ARGV[18])) }
`);

/** ARGV: 2 jti, 3 the draft's access key. Deletes the `used-jwt` marker only when it names that draft. */
const RELEASE_UPGRADE = new RedisScript(`${PRELUDE}
local marker = valueOf(redis.call('GET', key('used-jwt', ARGV[2])))
if type(marker) == 'table' and marker.upgradedTo == ARGV[3] then redis.call('DEL', key('used-jwt', ARGV[2])) end
return 0
`);

/**
 * ARGV: 2 old refresh key, 3 marker TTL, 4 now (s), 5 new access key, 6 new refresh key,
 * 7 sid hex, 8 udp-session entry, 9 access TTL, 10 refresh TTL, 11 accessExpires,
 * 12 refreshExpires, 13 sealed access, 14 now (ms), 15 marker expiry, 16 login TTL, 17 '1' when
 * the caller names the token's owner (a connection's refresh frame names the connection's
 * principal; an HTTP refresh names none), 18 that owner's principal id.
 * The script runs as one step, so the reuse marker is looked for first and written once, at the
 * end, naming the successor: a refresh that finds it is a reuse, one that does not is the only one.
 * The new records carry the old record's principal as it was stored, byte for byte: the script
 * copies its JSON text (the record starts with it, and the last `,"access":"` ends it: nothing
 * after the principal can hold that text) instead of decoding and encoding it again.
 * Answers `{'ok', old refresh entry, pairs the principal holds}`, `{'revoked', old access key}`,
 * `{'reused'}`, `{'unknown'}`, `{'unreadable'}`, `{'no-epoch'}` or `{'foreign'}` (another
 * principal's token: nothing is changed).
 */
const REFRESH = new RedisScript(`${PRELUDE}
local marker = key('used-session-refresh', ARGV[2])
local recordKey = key('session-refresh', ARGV[2])
local found = redis.call('MGET', marker, recordKey)
if found[1] then return { 'reused' } end
local raw = found[2]
local record = valueOf(raw)
if type(record) ~= 'table' then return { 'unknown' } end
local head = '{"value":{"principal":'
local tail, from = nil, 1
while true do
  local at = string.find(raw, ',"access":"', from, true)
  if not at then break end
  tail, from = at, at + 1
end
if string.sub(raw, 1, #head) ~= head or not tail or type(record.principal) ~= 'table'
  or type(record.principal.id) ~= 'string' or type(record.access) ~= 'string' then
  return { 'unreadable' }
end
local principal = record.principal.id
if ARGV[17] == '1' and principal ~= ARGV[18] then return { 'foreign' } end
local fam = type(record.fam) == 'string' and record.fam or nil
local verdict, login = lineage(tonumber(ARGV[4]), principal, fam)
if verdict == 'no-epoch' then return { verdict } end
redis.call('UNLINK', recordKey, key('session', record.access), key('udp-session', sidOf(record.access)))
unindex(principal, fam, ARGV[2])
if verdict == 'revoked' then return { verdict, record.access } end
local principalJson = string.sub(raw, #head + 1, tail - 1)
local famJson = fam and (',"fam":' .. cjson.encode(fam)) or ''
redis.call('SET', key('session', ARGV[5]),
  '{"value":{"principal":' .. principalJson .. ',"refresh":"' .. ARGV[6] .. '"' .. famJson .. ',"accessExpires":' .. ARGV[11] .. '},"expires":' .. ARGV[11] .. '}',
  'PX', ARGV[9])
redis.call('SET', key('udp-session', ARGV[7]), ARGV[8], 'PX', ARGV[9])
redis.call('SET', key('session-refresh', ARGV[6]),
  '{"value":{"principal":' .. principalJson .. ',"access":"' .. ARGV[5] .. '","sealedAccess":"' .. ARGV[13] .. '"' .. famJson .. ',"refreshExpires":' .. ARGV[12] .. '},"expires":' .. ARGV[12] .. '}',
  'PX', ARGV[10])
addMember(key('principal-sessions', principal), ARGV[6], ARGV[10], 'GT')
if fam then addMember(key('family-sessions', fam), ARGV[6], ARGV[10], 'GT') end
redis.call('SET', marker,
  '{"value":{"usedAt":' .. ARGV[14] .. ',"principalId":' .. cjson.encode(principal) .. ',"next":"' .. ARGV[6] .. '"},"expires":' .. ARGV[15] .. '}',
  'PX', ARGV[3])
if fam then touchLogin(fam, login, false, tonumber(ARGV[14]), tonumber(ARGV[16])) end
return { 'ok', raw, redis.call('SCARD', key('principal-sessions', principal)) }
`);

/**
 * ARGV: 2 the key of a session token, 3 revocation channel, 4 and 5 the event's text before and
 * after the revoked access key. Takes the pair, whichever token of the pair it is, with its UDP
 * `sid` entry, and announces it; answers the pair's access key, or nil when no live pair has that token.
 */
const REVOKE = new RedisScript(`${PRELUDE}
local function principalOf(record) return type(record.principal) == 'table' and record.principal.id or nil end
local record = valueOf(redis.call('GETDEL', key('session', ARGV[2])))
if type(record) == 'table' and type(record.refresh) == 'string' then
  redis.call('UNLINK', key('session-refresh', record.refresh), key('udp-session', sidOf(ARGV[2])))
  unindex(principalOf(record), type(record.fam) == 'string' and record.fam or nil, record.refresh)
  redis.call('PUBLISH', ARGV[3], ARGV[4] .. ARGV[2] .. ARGV[5])
  return ARGV[2]
end
record = valueOf(redis.call('GETDEL', key('session-refresh', ARGV[2])))
if type(record) == 'table' and type(record.access) == 'string' then
  redis.call('UNLINK', key('session', record.access), key('udp-session', sidOf(record.access)))
  unindex(principalOf(record), type(record.fam) == 'string' and record.fam or nil, ARGV[2])
  redis.call('PUBLISH', ARGV[3], ARGV[4] .. record.access .. ARGV[5])
  return record.access
end
return false
`);

/** Stands for the revoked access key in the event text the revoke script completes (the text holds nothing else it could match). */
const ACCESS_KEY_SLOT = '--access-key--';

/** What a scripted upgrade found. */
export type ScriptedUpgrade =
  | { readonly kind: 'stored'; readonly pairsHeld: number }
  | { readonly kind: 'revoked' | 'used' | 'no-epoch' };

/** What a scripted refresh found. */
export type ScriptedRefresh =
  | { readonly kind: 'rotated'; readonly record: RefreshRecord; readonly pairsHeld: number }
  | { readonly kind: 'revoked'; readonly replacedAccessKey: string }
  | { readonly kind: 'reused' | 'unknown' | 'unreadable' | 'no-epoch' | 'foreign' };

/**
 * Runs the session scripts. `SessionLifecycle` uses it when the store offers scripts.
 *
 * @example
 * ```ts
 * const scripted = cache.scripts && new SessionScripts(cache.scripts, pairs, jwts, logins);
 * const outcome = await scripted.upgrade(claims, principal, pairs.draft());
 * ```
 */
export class SessionScripts {
  /** The text of a session revocation's event before and after the revoked access key, which the revoke script fills in. */
  private readonly revokedEventText: readonly [string, string];

  constructor(
    private readonly scripts: CacheScripts,
    private readonly broadcast: ScriptedBroadcast,
    private readonly pairs: SessionPairStore,
    private readonly jwts: JwtInvalidation,
    private readonly logins: LoginInventory,
    private readonly lifetimes: { readonly accessMs: number; readonly refreshMs: number },
  ) {
    const [head, tail] = broadcast.message({ kind: 'revoked', sessionKeys: [ACCESS_KEY_SLOT], jtis: [] }).split(ACCESS_KEY_SLOT) as [string, string];
    this.revokedEventText = [head, tail];
  }

  /**
   * If the JWT's lineage stands and its `jti` is unused: spends the `jti`, stores the drafted
   * pair with its index entries, notes the upgrade in the login's record and announces that the
   * JWT is spent (here and to the fleet).
   */
  async upgrade(claims: JwtClaims, principal: Principal, draft: PairDraft): Promise<ScriptedUpgrade> {
    const { accessRecord, refreshRecord } = this.pairs.records(draft, principal, claims.fam);
    const event = Object.freeze({ kind: 'revoked', sessionKeys: [], jtis: [claims.jti] } as const);
    const now = Date.now();
    const usedMs = Math.ceil(this.jwts.markerTtlMs(claims));
    const { accessMs, refreshMs } = this.lifetimes;
    const reply = (await this.scripts.run(UPGRADE, [
      String(claims.iat),
      claims.sub,
      claims.fam ?? '',
      claims.jti,
      // The marker names the pair it was spent on, so a caller that lost the reply undoes only its own.
      encodeEntry({ upgradedTo: draft.access }, usedMs, now),
      String(usedMs),
      draft.access,
      encodeEntry(accessRecord, accessMs, now),
      String(accessMs),
      draft.sidHex,
      encodeEntry(draft.access, accessMs, now),
      draft.refresh,
      encodeEntry(refreshRecord, refreshMs, now),
      String(refreshMs),
      String(now),
      String(this.logins.ttlMs),
      principal.id,
      this.broadcast.channel,
      this.broadcast.message(event),
    ])) as [string, number?];
    if (reply[0] !== 'ok') return { kind: reply[0] as 'revoked' | 'used' | 'no-epoch' };
    this.broadcast.delivered(event);
    return { kind: 'stored', pairsHeld: Number(reply[1]) };
  }

  /**
   * Undoes an upgrade whose reply was lost: the caller cannot tell whether the script ran, or
   * whether it answered `used` because another upgrade won. Deletes the drafted pair's entries
   * and spends-marker only where the marker names this draft, so a JWT another upgrade spent
   * stays spent.
   */
  async releaseUpgrade(claims: JwtClaims, draft: PairDraft): Promise<void> {
    await this.scripts.run(RELEASE_UPGRADE, [claims.jti, draft.access]);
  }

  /**
   * If the refresh token under `refresh` is unused: takes its pair and stores the drafted pair in
   * its place (same principal and family), marks the token used with its successor and notes the
   * refresh in the login's record. A pair whose lineage was revoked is taken and not replaced.
   * With `owner`, a token of another principal is answered `foreign` and changes nothing.
   */
  async refresh(refresh: string, draft: PairDraft, markerMs: number, owner: string | undefined): Promise<ScriptedRefresh> {
    const now = Date.now();
    const { accessMs, refreshMs } = this.lifetimes;
    const reply = (await this.scripts.run(REFRESH, [
      refresh,
      String(markerMs),
      String(epochSecondsNow()),
      draft.access,
      draft.refresh,
      draft.sidHex,
      encodeEntry(draft.access, accessMs, now),
      String(accessMs),
      String(refreshMs),
      String(draft.accessExpires),
      String(draft.refreshExpires),
      draft.sealedAccess,
      String(now),
      String(now + markerMs),
      String(this.logins.ttlMs),
      owner === undefined ? '' : '1',
      owner ?? '',
    ])) as [string, string?, number?];
    if (reply[0] === 'ok') return { kind: 'rotated', record: (JSON.parse(reply[1]!) as { value: RefreshRecord }).value, pairsHeld: Number(reply[2]) };
    if (reply[0] === 'revoked') return { kind: 'revoked', replacedAccessKey: reply[1]! };
    return { kind: reply[0] as 'reused' | 'unknown' | 'unreadable' | 'no-epoch' | 'foreign' };
  }

  /** Takes the pair of a session token's key, either token of it, and announces it; answers the pair's access key. */
  async revoke(key: string): Promise<string | undefined> {
    const reply = await this.scripts.run(REVOKE, [key, this.broadcast.channel, ...this.revokedEventText]);
    if (typeof reply !== 'string') return undefined;
    this.broadcast.delivered(Object.freeze({ kind: 'revoked', sessionKeys: [reply], jtis: [] }));
    return reply;
  }
}
