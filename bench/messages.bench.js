/**
 * A request's way through the connection protocol, without sockets: `ConnectionProtocol.receive`
 * with a frame as text (as a transport hands it over) up to the reply text handed back to the
 * transport, in ns per message on one core. Beside it the floor: the bare `ws` control's own
 * work per message (parse the frame, answer the same reply as text). Each case runs on one
 * connection and on 5,000, where consecutive messages go to connections far apart, as 5,000
 * players' messages do: the objects a message reads of its connection (its protocol state, its
 * session memo, its near-cache entry, its rate-limit bucket) are then no longer in the CPU's
 * caches. The load test's server answers this many players; this bench shows what of its CPU per
 * message is ours, without the socket and kernel noise of a 2-core machine.
 *
 * Each round runs every case for `count` messages, in an order that rotates by round; the table
 * gives the median ns per message with the min–max over rounds, and each case's paired
 * difference from the floor at the same number of connections.
 */
import 'reflect-metadata';
import { performance } from 'node:perf_hooks';
import { AllowAnonymous, Gate, Portal, RateLimit, SessionShield } from '@portcullis/core';
import { createMemoryTestStack } from '@portcullis/core/testing';
import { ConnectionProtocol } from '@portcullis/core/transport';
import { pinProcess, planPinning } from './lib/cpu-pinning.js';
import { median, withSpread } from './lib/measure.js';

export const title = 'A request through the connection protocol, no sockets: ns per message at 1 and 5,000 connections (one core)';
export const defaults = { rounds: 9, count: 100_000 };

const CONNECTIONS = [1, 5000];

/** The example's `move`, on gates that differ only in what guards them. */
class BenchPortal {
  open(data) {
    return { x: Number(data?.x), y: Number(data?.y), by: undefined };
  }
  session(data, _clientId, ctx) {
    return { x: Number(data?.x), y: Number(data?.y), by: ctx.principal?.id };
  }
  limited(data, _clientId, ctx) {
    return { x: Number(data?.x), y: Number(data?.y), by: ctx.principal?.id };
  }
}
const decorate = (name, decorators) => {
  const descriptor = Object.getOwnPropertyDescriptor(BenchPortal.prototype, name);
  for (const decorator of decorators.reverse()) decorator(BenchPortal.prototype, name, descriptor);
};
decorate('open', [AllowAnonymous, Gate('open')]);
decorate('session', [SessionShield, Gate('session')]);
// A limit no bench run reaches: every message is counted and passes.
decorate('limited', [SessionShield, RateLimit({ limit: 1_000_000_000, windowSeconds: 1, by: 'connection' }), Gate('limited')]);
Portal('/bench')(BenchPortal);

const CASES = [
  { key: 'floor', name: 'floor: parse the frame, answer the reply text (the bare ws control)' },
  { key: 'open', name: 'our gate, @AllowAnonymous' },
  { key: 'session', name: '@SessionShield gate (near-cache hit)' },
  { key: 'limited', name: '@SessionShield + @RateLimit by connection (the example\'s move)' },
  { key: 'shed', name: '@SessionShield gate shed: answered overloaded unrun, the loop behind' },
];
/** The gate each case sends to, and what its replies carry. */
const GATE_OF = { floor: 'open', open: 'open', session: 'session', limited: 'limited', shed: 'session' };
const EXPECTED_OF = { floor: '"ok":true', open: '"ok":true', session: '"ok":true', limited: '"ok":true', shed: '"code":"overloaded"' };

/** `n` connections of the protocol, each admitted with its own session and answering into `sink`. */
async function connections(stack, n, sink) {
  const list = [];
  for (let i = 0; i < n; i++) {
    const session = await stack.sessions.upgrade(stack.issuer.issueLoginPair(`player-${n}-${i}`).accessToken);
    const memo = new Map();
    const peer = { transport: 'ws', clientId: `client-${n}-${i}`, remoteAddress: '127.0.0.1' };
    const admitted = await stack.dispatcher.admit({ ...peer, credential: session.accessToken, memo });
    if (!admitted.ok) throw new Error(`bench setup: session ${i} not admitted (${admitted.code})`);
    list.push(new ConnectionProtocol({ ...peer, dispatcher: stack.dispatcher, registry: stack.registry, handshake: 'done', credential: admitted, memo, send: sink, close: () => {} }));
  }
  return list;
}

/** Keeps the loop busy for `ms`. */
function busyFor(ms) {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

/** The bare control's answer to one frame (loadtest/lib/control-server-process.js). */
function floorReceive(text, sink) {
  let request;
  try {
    request = JSON.parse(text);
  } catch {
    return;
  }
  sink(JSON.stringify({ type: 'reply', id: request.id, ok: true, data: { x: Number(request.data?.x), y: Number(request.data?.y), by: 'control' } }));
}

export async function run({ rounds = defaults.rounds, count = defaults.count, pin = true, serverCpu = 1 } = {}) {
  if (!Number.isInteger(count) || count < 1) throw new Error('--count must be a positive integer');
  const plan = planPinning({ pin, serverCpu, generatorCpu: serverCpu === 0 ? 1 : 0 });
  pinProcess(plan.serverCpu);
  const stack = await createMemoryTestStack({ portals: [BenchPortal] });
  let replies = 0;
  let last = '';
  const sink = (text) => {
    replies++;
    last = text;
  };
  const byCount = new Map();
  for (const n of CONNECTIONS) byCount.set(n, await connections(stack, n, sink));
  /** ns per message of `count` messages of `key` spread over `n` connections. */
  const time = (key, n) => {
    const list = byCount.get(n);
    // A stride coprime with n visits every connection once per n messages, each far from the last.
    const stride = n === 1 ? 0 : 2_503;
    const gate = GATE_OF[key];
    if (key === 'shed') {
      // The dispatcher sheds past 1 ms of lag. One request starts the lag gauge; the loop is then
      // kept busy past the gauge's due time. Nothing here yields to the loop, so the gauge never
      // runs and reads the loop ever further behind: every request of the run is shed (none says
      // how long it waited, no transport having noted a read), and its last reply shows it.
      stack.dispatcher.shedWhenBehind(1);
      list[0].receive('{"id":0,"portal":"/bench","gate":"session","data":{}}');
      busyFor(30);
    }
    const before = replies;
    const start = performance.now();
    try {
      for (let k = 0, i = 0; k < count; k++, i = (i + stride) % n) {
        const text = `{"id":${k},"portal":"/bench","gate":"${gate}","data":{"x":${k % 100},"y":${i % 100}}}`;
        if (key === 'floor') floorReceive(text, sink);
        else list[i].receive(text);
      }
    } finally {
      // The test stack's dispatcher never sheds otherwise.
      stack.dispatcher.shedWhenBehind(false);
    }
    const ns = ((performance.now() - start) * 1e6) / count;
    if (replies - before !== count || !last.includes(EXPECTED_OF[key])) throw new Error(`bench: ${key} at ${n} connections answered ${replies - before} of ${count}: ${last}`);
    return ns;
  };
  const samples = new Map();
  const runs = CASES.flatMap(({ key }) => CONNECTIONS.map((n) => ({ key, n })));
  for (let r = -1; r < rounds; r++) {
    const shift = ((r % runs.length) + runs.length) % runs.length;
    for (const { key, n } of [...runs.slice(shift), ...runs.slice(0, shift)]) {
      const ns = time(key, n);
      if (r >= 0) samples.set(`${key}@${n}`, [...(samples.get(`${key}@${n}`) ?? []), ns]);
    }
  }
  await stack.close();
  const columns = ['case', 'ns/msg, 1 connection', 'ns/msg, 5,000 connections', 'over the floor, 1', 'over the floor, 5,000', '5,000 ÷ 1'];
  const fmt = (values) => withSpread(values.map((v) => Math.round(v)), 0);
  const overFloor = (key, n) => {
    const own = samples.get(`${key}@${n}`);
    const floor = samples.get(`floor@${n}`);
    return key === 'floor' ? '–' : fmt(own.map((v, i) => v - floor[i]));
  };
  const rows = CASES.map(({ key, name }) => ({
    case: name,
    'ns/msg, 1 connection': fmt(samples.get(`${key}@1`)),
    'ns/msg, 5,000 connections': fmt(samples.get(`${key}@5000`)),
    'over the floor, 1': overFloor(key, 1),
    'over the floor, 5,000': overFloor(key, 5000),
    '5,000 ÷ 1': (median(samples.get(`${key}@5000`)) / median(samples.get(`${key}@1`))).toFixed(2),
  }));
  const notes = [
    `each round runs every case for ${count.toLocaleString('en-US')} messages after a warm-up round, in an order that rotates by round; ${rounds} rounds; medians with the min–max over rounds; "over the floor" is each round's paired difference`,
    'a message is the text of a move frame; the protocol parses it, runs the gate (its shield, its limit, the handler) and hands the reply text to the transport, as on a socket; the floor is what the bare ws control server does per message',
    'on 5,000 connections consecutive messages go to connections 2,503 apart (each session upgraded and admitted as a socket would be), so what a message reads of its connection is no longer in the CPU caches, as with 5,000 players',
    plan.enabled ? `this process on core ${plan.serverCpu} (taskset)` : `not pinned: ${plan.warning}`,
  ];
  return { columns, rows, notes };
}
