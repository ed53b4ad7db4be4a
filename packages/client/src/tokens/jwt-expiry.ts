/**
 * Reads the `exp` of a JWT without verifying it: the client only uses it to
 * refresh before the server would refuse the token. Answers milliseconds since
 * the epoch, or `undefined` when the token has no readable `exp`.
 *
 * @example
 * ```ts
 * if ((jwtExpiresAt(token) ?? Infinity) <= Date.now()) await client.refresh('login');
 * ```
 */
export function jwtExpiresAt(token: string): number | undefined {
  const payload = token.split('.')[1];
  if (payload === undefined) return undefined;
  try {
    const base64 = payload.replace(/-/g, '+').replace(/_/g, '/');
    const claims: unknown = JSON.parse(atob(base64.padEnd(Math.ceil(base64.length / 4) * 4, '=')));
    const exp = typeof claims === 'object' && claims !== null ? (claims as Record<string, unknown>)['exp'] : undefined;
    return typeof exp === 'number' ? exp * 1000 : undefined;
  } catch {
    return undefined;
  }
}
