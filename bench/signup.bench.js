/**
 * Signup over real HTTP at bcrypt cost 11, a taken name against a free one. A taken name must
 * answer 409 after the same work as a free one answers 201, or the time of a signup tells an
 * attacker which names exist. The contrast case is what a taken name cost when the names were
 * looked up before the password was hashed: one account-store lookup.
 */
import { once } from 'node:events';
import { performance } from 'node:perf_hooks';
import 'reflect-metadata';
import { container as rootContainer } from 'tsyringe';
import { ACCOUNT_STORE, loadConfig, registerPortcullis, silentLoggerFactory } from '@portcullis/core';
import { JwtAuthController, createPortcullisApp } from '@portcullis/express';
import { median, ratio, verdict } from './lib/measure.js';

export const title = 'Signup at cost 11: a taken name against a free one (HTTP)';
export const defaults = { rounds: 3 };

const WORK_FACTOR = 11;
const TARGET_SPREAD = 1.1;
const precise = (a, b) => Number((a / b).toPrecision(3));

class BenchAuthController extends JwtAuthController {}

async function post(url, body) {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  await response.arrayBuffer();
  return response.status;
}

export async function run({ rounds }) {
  const config = loadConfig({
    env: {
      SVC__SECURITY__MODE: 'jwt',
      SVC__SECURITY__KEY: Buffer.alloc(32, 9).toString('base64'),
      SVC__SECURITY__PASSWORD__WORK_FACTOR: String(WORK_FACTOR),
      // Every taken-name probe below is a refused signup from one address: lift the address limit.
      SVC__SECURITY__LOCKOUT__IP_MAX_FAILURES: '0',
    },
    tree: {},
  });
  const container = rootContainer.createChildContainer();
  const portcullis = registerPortcullis(container, { config, loggers: silentLoggerFactory });
  await portcullis.stores?.ready();
  const server = createPortcullisApp(container, { controllers: [BenchAuthController] }).listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = `http://127.0.0.1:${server.address().port}/auth/signup`;
  const accounts = container.resolve(ACCOUNT_STORE);
  const password = 'correct horse battery staple';
  let n = 0;
  const expect = (status, want) => {
    if (status !== want) throw new Error(`signup answered ${status}, expected ${want}`);
  };
  await post(url, { email: 'taken@example.com', username: 'taken', password });

  const cases = [
    { name: 'signup, free name (201)', fn: async () => expect(await post(url, { email: `free${++n}@example.com`, username: `free${n}`, password }), 201) },
    { name: 'signup, taken name (409)', fn: async () => expect(await post(url, { email: `probe${++n}@example.com`, username: 'taken', password }), 409) },
    { name: 'account lookup only (a taken name before, contrast)', fn: () => accounts.findByUsername('taken') },
  ];
  const times = Math.max(9, rounds * 5);
  const wall = cases.map(() => []);
  for (let i = 0; i < 2 + times; i++) {
    for (let k = 0; k < cases.length; k++) {
      const index = (i + k) % cases.length;
      const start = performance.now();
      await cases[index].fn();
      if (i >= 2) wall[index].push(performance.now() - start);
    }
  }
  server.close();
  await portcullis.close();
  const ms = wall.map(median);
  const spread = ratio(Math.max(ms[0], ms[1]), Math.min(ms[0], ms[1]));
  return {
    columns: ['case', 'median ms', 'ratio to free name'],
    rows: cases.map((c, i) => ({ case: c.name, 'median ms': ms[i], 'ratio to free name': precise(ms[i], ms[0]) })),
    notes: [
      `Taken vs free name (slower / faster): ${spread}× — target ≤ ${TARGET_SPREAD}× (${verdict([spread], { atMost: TARGET_SPREAD })}).`,
      `Before the fix a taken name cost one lookup: ${Math.round(ms[0] / ms[2]).toLocaleString('en-US')}× faster than a free one.`,
      `${times} interleaved samples per case after 2 warm-up rounds, one request at a time, in-memory stores.`,
    ],
  };
}
