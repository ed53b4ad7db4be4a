/**
 * What a client that sends faster than its gate answers can make a server hold: at most
 * `maxPendingRequests` unanswered requests per connection (WebSocket, TCP: the server stops
 * reading that socket until replies leave, and loses nothing) and per UDP transport (further
 * datagrams are dropped and counted), and on TCP at most `maxBufferedBytes` of unread output
 * before the client is dropped. Real sockets on 127.0.0.1.
 */
import 'reflect-metadata';
import { connect as netConnect } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { encodeFrame } from '@portcullis/protocol';
import { Gate, Portal, SessionShield } from '@portcullis/core';
import { createMemoryTestStack, type TestStack } from '@portcullis/core/testing';
import { pushUntilDropped, tcpDriver, udpDriver, wsDriver, type RealtimeClient } from './support/transport-drivers.js';
import { byId, type Reply } from './support/inbox.js';

/** A gate that answers only when the test lets it: `held` calls wait on `release()`. */
const gate = { calls: 0, waiting: [] as Array<() => void> };
function release(): void {
  for (const answer of gate.waiting.splice(0)) answer();
}

@Portal('/hold')
class HoldPortal {
  @Gate('wait')
  @SessionShield
  wait(data: unknown): Promise<unknown> {
    gate.calls++;
    return new Promise((resolve) => gate.waiting.push(() => resolve(data)));
  }
}

const LIMIT = 4;
let stack: TestStack;
beforeEach(async () => {
  gate.calls = 0;
  gate.waiting.length = 0;
  stack = await createMemoryTestStack({ portals: [HoldPortal] });
});
afterEach(async () => {
  release();
  await stack.close();
});

/** Sends requests `first`… one at a time, each in its own write and its own read on the server. */
async function sendApart(client: RealtimeClient, count: number, first: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    client.sendRaw(JSON.stringify({ id: first + i, portal: '/hold', gate: 'wait', data: i }));
    await new Promise((resolve) => setTimeout(resolve, 15));
  }
}

describe.each([
  ['WebSocket', wsDriver(), { ws: { maxPendingRequests: LIMIT } }],
  ['TCP', tcpDriver(), { tcp: { maxPendingRequests: LIMIT } }],
] as const)('%s: unanswered requests per connection', (_name, driver, options) => {
  afterEach(() => driver.stop());

  it(`stops reading at ${LIMIT} unanswered requests and reads the rest, in order, once they are answered`, async () => {
    await driver.start(stack, options);
    const client = await driver.connect(await stack.session('eager'));
    await sendApart(client, LIMIT + 3, 1);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(gate.calls).toBe(LIMIT);

    release();
    const first = (await client.inbox.take(byId(1))) as Reply;
    expect(first).toMatchObject({ ok: true, data: 0 });
    await expect.poll(() => gate.calls).toBe(LIMIT + 3);
    release();
    for (let id = 2; id <= LIMIT + 3; id++) expect(await client.inbox.take(byId(id))).toMatchObject({ ok: true, data: id - 1 });
    const order = (client.inbox.all as Reply[]).filter((f) => typeof f?.id === 'number').map((f) => f.id);
    expect(order).toEqual([1, 2, 3, 4, 5, 6, 7]);
    await client.close();
  });
});

describe('UDP: unanswered requests per transport', () => {
  const driver = udpDriver();
  afterEach(() => driver.stop());

  it(`drops and counts datagrams past ${LIMIT} unanswered, and answers those it took`, async () => {
    await driver.start(stack, { udp: { maxPendingRequests: LIMIT } });
    const token = await stack.session('eager');
    const client = await driver.connect(token);
    const replies = Array.from({ length: LIMIT + 3 }, (_, i) => client.request('/hold', 'wait', i, 1000).catch(() => undefined));
    await expect.poll(() => driver.transport().dropped.overloaded).toBe(3);
    expect(gate.calls).toBe(LIMIT);
    release();
    const answered = (await Promise.all(replies)).filter((r): r is Reply => r !== undefined);
    expect(answered.map((r) => r.data)).toEqual([0, 1, 2, 3]);
    await client.close();
  });
});

describe('TCP: unread output', () => {
  const driver = tcpDriver();
  afterEach(() => driver.stop());

  it('drops a client that does not read what it is sent, once its output passes maxBufferedBytes', async () => {
    const warnings: string[] = [];
    const loggers = { create: () => ({ debug() {}, info() {}, warn: (message: string) => void warnings.push(message), error() {} }) };
    await driver.start(stack, { tcp: { maxBufferedBytes: 256 * 1024, loggers } });
    const socket = netConnect({ port: driver.port(), host: '127.0.0.1' });
    socket.on('error', () => {});
    await new Promise((resolve) => socket.once('connect', resolve));
    const authReply = new Promise<Buffer>((resolve) => socket.once('data', resolve));
    socket.write(encodeFrame(JSON.stringify({ type: 'auth', token: await stack.session('slow') })));
    // The auth reply, then nothing more is read.
    expect((await authReply).toString()).toContain('"ok":true');
    socket.pause();
    await pushUntilDropped(stack, 'slow', driver.transport());
    expect(warnings).toContain('dropping a TCP client that does not read its replies');
    socket.destroy();
  });
});
