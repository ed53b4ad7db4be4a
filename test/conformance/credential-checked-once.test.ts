/**
 * One decision per credential: a connection's credential is decided by the shield
 * enforcer when it connects, and the work its shield did (the JWT's signature
 * check) is kept for the connection's gated messages instead of being done again.
 */
import { JwtTokenValidator } from '@portcullis/core';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createMemoryTestStack, type TestStack } from '@portcullis/core/testing';
import { TestGamePortal } from './support/test-portal.js';
import { tcpDriver, wsDriver, type RealtimeClient, type TransportDriver } from './support/transport-drivers.js';

const connectionDrivers: Array<[string, () => TransportDriver]> = [
  ['ws', wsDriver],
  ['tcp', tcpDriver],
];

describe.each(connectionDrivers)('%s: a JWT-authenticated connection', (_name, makeDriver) => {
  let stack: TestStack;
  let driver: TransportDriver;
  let client: RealtimeClient | undefined;

  beforeEach(async () => {
    stack = await createMemoryTestStack({ portals: [TestGamePortal] });
    driver = makeDriver();
    await driver.start(stack);
  });
  afterEach(async () => {
    vi.restoreAllMocks();
    await client?.close();
    await driver.stop();
    await stack.close();
  });

  it('verifies its JWT signature once, when it connects, not again on its gated messages', async () => {
    const jwt = stack.jwt('ivan');
    const validate = vi.spyOn(JwtTokenValidator.prototype, 'validate');
    const verificationsOf = () => validate.mock.calls.filter(([token]) => token === jwt).length;

    client = await driver.connect(jwt);
    expect(verificationsOf()).toBe(1);
    for (let i = 0; i < 3; i++) expect(await client.request('/game', 'whoami')).toMatchObject({ ok: true, data: 'ivan' });
    expect(verificationsOf()).toBe(1);
  });

  it('verifies a JWT it takes with a second auth frame once, not again on the gated messages after it', async () => {
    client = await driver.connect(stack.jwt('judy'));
    const fresh = stack.jwt('judy');
    const validate = vi.spyOn(JwtTokenValidator.prototype, 'validate');
    const verificationsOf = () => validate.mock.calls.filter(([token]) => token === fresh).length;

    client.sendRaw(JSON.stringify({ type: 'auth', token: fresh }));
    expect(await client.inbox.take((frame) => (frame as { type?: string }).type === 'auth')).toEqual({ type: 'auth', ok: true });
    expect(verificationsOf()).toBe(1);
    for (let i = 0; i < 3; i++) expect(await client.request('/game', 'whoami')).toMatchObject({ ok: true, data: 'judy' });
    expect(verificationsOf()).toBe(1);
  });

  it('keeps what it knew of its JWT when a second auth frame is refused', async () => {
    const jwt = stack.jwt('kim');
    const validate = vi.spyOn(JwtTokenValidator.prototype, 'validate');
    const verificationsOf = () => validate.mock.calls.filter(([token]) => token === jwt).length;
    client = await driver.connect(jwt);

    client.sendRaw(JSON.stringify({ type: 'auth', token: stack.jwt('someone-else') }));
    expect(await client.inbox.take((frame) => (frame as { type?: string }).type === 'auth')).toMatchObject({ type: 'auth', ok: false, error: { code: 'forbidden' } });
    for (let i = 0; i < 3; i++) expect(await client.request('/game', 'whoami')).toMatchObject({ ok: true, data: 'kim' });
    expect(verificationsOf()).toBe(1);
  });
});
