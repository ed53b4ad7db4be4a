/**
 * The claim rules of {@link JwtTokenValidator}, applied to a payload whose
 * signature is already verified (internal). Answers the first broken rule.
 */
import type { SecurityConfig } from '../contracts/portcullis-config.js';
import type { JwtTokenType } from '../contracts/tokens.js';
import type { TokenFailureReason } from '../errors/error-codes.js';

type Claims = Readonly<Record<string, unknown>>;

function isNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}

function timeRules(exp: unknown, nbf: unknown, iat: unknown, skew: number): TokenFailureReason | undefined {
  const now = Date.now() / 1000;
  if (exp === undefined) return 'missing_claim';
  if (!isNumber(exp)) return 'malformed';
  if (now >= exp + skew) return 'expired';
  if (nbf !== undefined) {
    if (!isNumber(nbf)) return 'malformed';
    if (nbf > now + skew) return 'not_yet_valid';
  }
  if (iat === undefined) return 'missing_claim';
  if (!isNumber(iat)) return 'malformed';
  if (iat > now + skew) return 'issued_in_future';
  return undefined;
}

function audienceMatches(aud: unknown, audience: string): boolean {
  if (typeof aud === 'string') return aud === audience;
  return Array.isArray(aud) && aud.includes(audience);
}

function identifier(value: unknown): TokenFailureReason | undefined {
  if (value === undefined) return 'missing_claim';
  return typeof value === 'string' && value.length > 0 ? undefined : 'malformed';
}

/**
 * Checks time claims (with `clock-skew-seconds` leeway), the header type against
 * `expected`, `iss`, `aud`, `sub`, `jti` and `fam`. Own properties only: a claim
 * inherited from a prototype never counts.
 */
export function checkClaims(
  payload: Claims,
  headerType: JwtTokenType | undefined,
  expected: JwtTokenType,
  security: SecurityConfig,
): TokenFailureReason | undefined {
  const own = (name: string): unknown => (Object.hasOwn(payload, name) ? payload[name] : undefined);
  const time = timeRules(own('exp'), own('nbf'), own('iat'), security.clockSkewSeconds);
  if (time) return time;
  if (headerType !== expected) return 'wrong_type';
  const iss = own('iss');
  if (iss === undefined) return 'missing_claim';
  if (iss !== security.issuer) return 'wrong_issuer';
  const aud = own('aud');
  if (aud === undefined) return 'missing_claim';
  if (!audienceMatches(aud, security.audience)) return 'wrong_audience';
  const fam = own('fam');
  if (fam !== undefined && typeof fam !== 'string') return 'malformed';
  return identifier(own('sub')) ?? identifier(own('jti'));
}
