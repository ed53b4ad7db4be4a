/**
 * A connection transport cannot be built without a registry: without one, revocation would
 * close no socket. Leaving it out is a type error (the `@ts-expect-error` lines fail the type
 * check of `npm test` if `registry` ever becomes optional) and throws at run time for code the
 * compiler did not see.
 */
import { createServer } from 'node:http';
import { describe, expect, it } from 'vitest';
import { createMemoryTestStack } from '@portcullis/core/testing';
import { createTcpTransport } from '@portcullis/tcp';
import { attachWebSocketTransport } from '@portcullis/ws';

describe('a connection transport without a registry', () => {
  it('does not compile, and throws naming the registry', async () => {
    const stack = await createMemoryTestStack();
    try {
      const { dispatcher } = stack;
      // @ts-expect-error registry is required
      expect(() => createTcpTransport({ dispatcher })).toThrow(/needs a registry/);
      const server = createServer();
      // @ts-expect-error registry is required
      expect(() => attachWebSocketTransport(server, { dispatcher })).toThrow(/needs a registry/);
      expect(server.listenerCount('upgrade')).toBe(0);
    } finally {
      await stack.close();
    }
  });
});
