import { afterEach, describe, expect, it, vi } from 'vitest';
import { createMemoryTestStack, storeUnavailable, type TestStack } from '@portcullis/core/testing';
import { JwtInvalidation } from '../src/session/jwt-invalidation.js';

describe('a session refresh that fails after its pair was rotated', () => {
  let stack: TestStack | undefined;
  afterEach(async () => {
    vi.restoreAllMocks();
    await stack?.close();
    stack = undefined;
  });

  it('leaves no pair behind that nobody received: the store failed while the new pair was checked', async () => {
    stack = await createMemoryTestStack();
    const first = await stack.sessions.upgrade(stack.jwt('rhea'));
    vi.spyOn(JwtInvalidation.prototype, 'isLineageRevoked').mockRejectedValueOnce(storeUnavailable());

    await expect(stack.sessions.refresh(first.refreshToken)).rejects.toMatchObject({ code: 'unavailable' });
    // The old pair was rotated away and the new one was not handed out: no live pair is left.
    expect(await stack.sessions.validate(first.accessToken)).toBeUndefined();
    expect(await stack.sessions.revokeAllFor('rhea')).toBe(0);
  });
});
