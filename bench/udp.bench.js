/**
 * Server CPU per UDP datagram: the authenticated form (sid, sequence number, MAC,
 * a sealed reply) beside the JSON form carrying a session token, both at a
 * @SessionShield gate, and an unshielded JSON request as the floor; and the heap
 * held by 10,000 replay windows. Datagrams go through the transport's own message
 * handler, replies through the real socket to a port nobody reads, so only the
 * server's work is counted (process CPU time over a fixed number of datagrams).
 */
import 'reflect-metadata';
import { createHmac, createSecretKey, randomBytes } from 'node:crypto';
import { availableParallelism, loadavg } from 'node:os';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { silentLoggerFactory, UdpKeyring, udpSessionId } from '@portcullis/core';
import { udpMac } from '@portcullis/core/transport';
import { createMemoryTestStack } from '@portcullis/core/testing';
import { layUdpDatagram, readUdpDatagram, UdpMacKey } from '@portcullis/protocol';
import { createUdpTransport } from '@portcullis/udp';
import { BenchPortal } from './lib/bench-portal.js';
import { median, verdict } from './lib/measure.js';

export const title = 'UDP: server CPU per datagram, authenticated form beside the JSON token form (one core)';
export const defaults = { rounds: 5, count: 20_000 };

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc');

const DATA = { x: 12, y: 34 };
/** Replies go here: a UDP port on 127.0.0.1 that nobody binds (a send to it costs the server one syscall, as a real reply does). */
const NOWHERE = { address: '127.0.0.1', family: 'IPv4', port: 9, size: 0 };

function seal(sid, key, seq, request) {
  const datagram = layUdpDatagram(sid, seq, Buffer.from(JSON.stringify(request)));
  datagram.set(udpMac(key, datagram.subarray(0, datagram.length - 16)), datagram.length - 16);
  return Buffer.from(datagram);
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

/** Feeds `datagrams` through the handler in batches, waits until every reply went out, answers CPU µs used. */
async function cpuOf(udp, datagrams, answered) {
  const before = answered();
  const start = process.cpuUsage();
  for (let i = 0; i < datagrams.length; i += 256) {
    for (const datagram of datagrams.slice(i, i + 256)) udp.socket.emit('message', datagram, NOWHERE);
    await tick();
  }
  while (answered() - before < datagrams.length) await tick();
  const used = process.cpuUsage(start);
  return used.user + used.system;
}

export async function run({ rounds = 5, count = 20_000 } = {}) {
  const stack = await createMemoryTestStack({ portals: [BenchPortal] });
  const keyring = stack.container.resolve(UdpKeyring);
  const udp = createUdpTransport({ dispatcher: stack.dispatcher, keyring, loggers: silentLoggerFactory, maxPendingRequests: 4096 });
  await udp.bind(0, '127.0.0.1');
  let sent = 0;
  const send = udp.socket.send.bind(udp.socket);
  udp.socket.send = (...args) => {
    sent++;
    return send(...args);
  };
  const session = await stack.sessions.upgrade(stack.jwt('player-42'));
  const sid = udpSessionId(session.accessToken);
  const key = Buffer.from(session.udpKey, 'base64url');
  let seq = 1n;
  const cases = {
    'JSON, unshielded gate, no token (floor)': () => Buffer.from(JSON.stringify({ id: 1, portal: '/bench', gate: 'open', data: DATA, pad: 'x'.repeat(40) })),
    'JSON with the session token, @SessionShield gate': () => Buffer.from(JSON.stringify({ id: 1, portal: '/bench', gate: 'shielded', data: DATA, token: session.accessToken })),
    'authenticated (sid, seq, MAC), @SessionShield gate': () => seal(sid, key, seq++, { id: 1, portal: '/bench', gate: 'shielded', data: DATA }),
  };
  const samples = Object.fromEntries(Object.keys(cases).map((name) => [name, []]));
  for (let round = -1; round < rounds; round++) {
    for (const [name, make] of Object.entries(cases)) {
      const datagrams = Array.from({ length: count }, make);
      const dropsBefore = JSON.stringify(udp.dropped);
      // The garbage of building the datagrams is the client's, not the server's: collect it first.
      gc();
      const cpuUs = await cpuOf(udp, datagrams, () => sent);
      if (JSON.stringify(udp.dropped) !== dropsBefore) throw new Error(`bench: ${name} dropped datagrams: ${JSON.stringify(udp.dropped)}`);
      if (round >= 0) samples[name].push((cpuUs * 1000) / count);
    }
  }
  // What the authenticated form adds at least: two MACs over a datagram (check the request, seal the
  // reply), as the transport makes them (UdpMacKey), and as node:crypto's createHmac would.
  const body = seal(sid, key, 1n, { id: 1, portal: '/bench', gate: 'shielded', data: DATA });
  const parts = readUdpDatagram(body);
  const macKey = new UdpMacKey(key);
  const hmacKey = createSecretKey(key);
  const twoMacs = {
    transport: () => {
      macKey.matches(parts.signed, parts.mac);
      macKey.sign(body);
    },
    createHmac: () => {
      createHmac('sha256', hmacKey).update(parts.signed).digest();
      createHmac('sha256', hmacKey).update(parts.signed).digest();
    },
  };
  const macSamples = { transport: [], createHmac: [] };
  for (let round = -1; round < rounds; round++) {
    for (const [name, twice] of Object.entries(twoMacs)) {
      const start = process.cpuUsage();
      for (let i = 0; i < count; i++) twice();
      const used = process.cpuUsage(start);
      if (round >= 0) macSamples[name].push(((used.user + used.system) * 1000) / count);
    }
  }
  const hmacNs = median(macSamples.transport);
  const createHmacNs = median(macSamples.createHmac);
  const ns = Object.fromEntries(Object.entries(samples).map(([name, values]) => [name, median(values)]));
  const [floor, json, mac] = Object.values(ns);

  // 10,000 sessions' replay windows: one MAC-valid datagram of each (no session behind them: answered unauthorized).
  await udp.close();
  const windows = createUdpTransport({ dispatcher: stack.dispatcher, keyring, loggers: silentLoggerFactory, maxPendingRequests: 16_384 });
  await windows.bind(0, '127.0.0.1');
  const fresh = Array.from({ length: 10_000 }, () => {
    const sidOf = randomBytes(16);
    return seal(sidOf, keyring.keyFor(sidOf), 1n, { id: 1, portal: '/bench', gate: 'open', data: null });
  });
  for (let i = 0; i < 3; i++) gc();
  const heapBefore = process.memoryUsage().heapUsed;
  for (let i = 0; i < fresh.length; i += 512) {
    for (const datagram of fresh.slice(i, i + 512)) windows.socket.emit('message', datagram, NOWHERE);
    await tick();
  }
  for (let i = 0; i < 20; i++) await tick();
  if (windows.replayWindows !== 10_000) throw new Error(`bench: ${windows.replayWindows} replay windows, expected 10,000`);
  for (let i = 0; i < 3; i++) gc();
  const windowBytes = process.memoryUsage().heapUsed - heapBefore;
  await windows.close();
  await stack.close();

  const columns = ['case', 'server CPU ns/datagram', 'over the JSON floor', 'over JSON with token'];
  const rows = Object.entries(ns).map(([name, value]) => ({
    case: name,
    'server CPU ns/datagram': Math.round(value),
    'over the JSON floor': `${Math.round(value - floor)} ns`,
    'over JSON with token': name === Object.keys(ns)[1] ? '–' : `${Math.round(value - json)} ns`,
  }));
  rows.push({
    case: 'two MACs alone, UdpMacKey (what the transport does: the floor of the authenticated form\'s extra work)',
    'server CPU ns/datagram': Math.round(hmacNs),
    'over the JSON floor': '–',
    'over JSON with token': '–',
  });
  rows.push({
    case: 'two MACs alone, node:crypto createHmac (for comparison)',
    'server CPU ns/datagram': Math.round(createHmacNs),
    'over the JSON floor': '–',
    'over JSON with token': '–',
  });
  rows.push({
    case: '10,000 replay windows (heap)',
    'server CPU ns/datagram': '–',
    'over the JSON floor': `${(windowBytes / 1024 / 1024).toFixed(2)} MiB`,
    'over JSON with token': `${Math.round(windowBytes / 10_000)} B/window`,
  });
  return {
    columns,
    rows,
    notes: [
      `authenticated − JSON with token: ${Math.round(mac - json)} ns per datagram (target ≤ 3,000 ns: ${verdict([mac - json], { atMost: 3000 })}), of which the two MACs alone are ${Math.round(hmacNs)} ns (${Math.round((hmacNs / (mac - json)) * 100)} %); each case is one request and one reply through the transport's handler and a real socket send`,
      `load average when it ended: ${loadavg().map((l) => l.toFixed(1)).join(' ')} on ${availableParallelism()} cores: compare rows of one run, not runs`,
      'the authenticated form checks one HMAC-SHA256 on the request, one 64-entry replay window, and seals the reply with another HMAC (UdpMacKey: the key\'s padded blocks compressed once per session, then one SHA-256 block per 64 bytes of datagram and one more, no allocation); the JSON form parses and answers the token in clear',
      'heap: after 10,000 MAC-valid datagrams of distinct sids, with gc before and after; a window entry holds the sid, its prepared UDP key (UdpMacKey), the window and the reply counter',
      `${count.toLocaleString('en')} datagrams per case per round, median of ${rounds} rounds after one warm-up round`,
    ],
  };
}
