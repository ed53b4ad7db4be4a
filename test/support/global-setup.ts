/**
 * Vitest global setup. Redis-backed tests get their server from here (see redis-server.ts).
 */
export default async function setup(): Promise<void | (() => Promise<void>)> {
  return undefined;
}
