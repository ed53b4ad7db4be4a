/**
 * The client in a real browser: headless Chromium from Debian's `chromium`
 * package, driven by playwright-core (no browser download), loads a page served
 * by the example server that signs up, logs in, upgrades, connects over
 * WebSocket (auth frame) and calls `move`. Without chromium the suite is skipped
 * loudly outside CI and fails under CI.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGameServer, type RunningGameServer } from './support/game-server-harness.js';
import { serveClientPage } from './support/static-client-route.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const inCi = /^(?!(?:0|false|no)?$)/i.test(process.env.CI?.trim() ?? '');
const hasPlaywright = (() => {
  try {
    createRequire(import.meta.url).resolve('playwright-core');
    return true;
  } catch {
    return false;
  }
})();
const runnable = existsSync(CHROMIUM) && hasPlaywright;

if (!runnable && !inCi) {
  const bar = '!'.repeat(78);
  const missing = [!existsSync(CHROMIUM) && `${CHROMIUM} (apt-get install -y chromium)`, !hasPlaywright && 'playwright-core (devDependency)'].filter(Boolean);
  console.warn(['', bar, `!! browser test SKIPPED: missing ${missing.join(' and ')}`.padEnd(75) + ' !!', '!! under CI this suite fails instead.'.padEnd(75) + ' !!', bar, ''].join('\n'));
}

describe.skipIf(!runnable && !inCi)('the client in headless Chromium', () => {
  let server: RunningGameServer;
  let browser: Browser;

  beforeAll(async () => {
    const build = spawnSync(process.execPath, [resolve(ROOT, 'node_modules/typescript/bin/tsc'), '-b', 'packages/client'], { cwd: ROOT, encoding: 'utf8' });
    if (build.status !== 0) throw new Error(`tsc -b packages/client failed:\n${build.stdout}${build.stderr}`);
    server = await startGameServer({ beforeListen: (game) => serveClientPage(game.httpServer) });
    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
        '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  it('signs up, logs in, upgrades, connects over WebSocket and shows the move result', async () => {
    const page = await browser.newPage();
    const urls: string[] = [];
    const firstFrames: string[] = [];
    const diagnostics: string[] = [];
    page.on('console', (message) => diagnostics.push(`console.${message.type()}: ${message.text()}`));
    page.on('pageerror', (error) => diagnostics.push(`page error: ${error.message}`));
    page.on('requestfailed', (request) => diagnostics.push(`request failed: ${request.url()} ${request.failure()?.errorText ?? ''}`));
    page.on('response', (response) => { if (response.status() >= 400) diagnostics.push(`HTTP ${response.status()}: ${response.url()}`); });
    page.on('request', (request) => urls.push(request.url()));
    page.on('websocket', (ws) => {
      urls.push(ws.url());
      ws.on('framesent', ({ payload }) => { if (firstFrames.length === 0) firstFrames.push(String(payload)); });
    });
    await page.goto(`${server.baseUrl}/client-demo.html`);
    const result = page.locator('#result');
    await page.waitForFunction(() => document.querySelector('#result')?.getAttribute('data-state') !== 'running', null, { timeout: 15_000 })
      .catch(() => undefined);
    expect(await result.getAttribute('data-state'), `${await result.textContent()}\n${diagnostics.join('\n')}`).toBe('done');
    const shown = JSON.parse((await result.textContent()) ?? '{}') as { moved: { x: number; y: number; by: string }; transport: string; expirationIsDate: boolean };
    expect(shown.moved).toMatchObject({ x: 7, y: 9 });
    expect(shown.moved.by).toMatch(/^[0-9a-f-]{36}$/);
    expect(shown).toMatchObject({ transport: 'ws', expirationIsDate: true });
    expect(JSON.parse(firstFrames[0] ?? '{}')).toMatchObject({ type: 'auth' });
    expect(urls).toEqual(expect.arrayContaining([`${server.baseUrl}/auth/signup`, `${server.baseUrl.replace('http', 'ws')}/ws`]));
    expect(urls.filter((u) => /ey[\w-]+\.|;session|%3Bsession/.test(u))).toEqual([]);
    await page.close();
  });

  it.each([
    ['with Web Locks and IndexedDB', ''],
    ['without Web Locks (BroadcastChannel claims)', 'Object.defineProperty(navigator, "locks", { value: undefined })'],
    ['without IndexedDB (localStorage)', 'Object.defineProperty(globalThis, "indexedDB", { value: undefined })'],
  ])('two tabs of one origin refresh at the same moment and both stay logged in (reuse grace 0), %s', async (_how, without) => {
    const context = await browser.newContext();
    if (without !== '') await context.addInitScript(without);
    const [first, second] = [await context.newPage(), await context.newPage()];
    const diagnostics: string[] = [];
    for (const page of [first, second]) page.on('pageerror', (error) => diagnostics.push(`page error: ${error.message}`));
    const refreshesBefore = server.hits.get('/auth/refresh') ?? 0;
    for (const page of [first, second]) await page.goto(`${server.baseUrl}/client-demo.html`);
    await logInBothTabs(first, second);
    const at = Date.now() + 300;
    const refreshed = await Promise.all([first, second].map((page) => page.evaluate(async (startAt) => {
      const { client } = (window as unknown as { tab: { client: any } }).tab;
      while (Date.now() < startAt) await new Promise((resolve) => setTimeout(resolve, 1));
      const result = await client.refresh('session');
      return result.tokens.accessToken as string;
    }, at)));
    expect(refreshed[0], diagnostics.join('\n')).toBe(refreshed[1]);
    const after = await Promise.all([first, second].map((page) => page.evaluate(async () => {
      const { client, conn } = (window as unknown as { tab: { client: any; conn: any } }).tab;
      const moved = await conn.request('/game', 'move', { x: 1, y: 2 });
      return { state: conn.state, moved, session: client.tokens.session.accessToken as string };
    })));
    for (const tab of after) expect(tab).toMatchObject({ state: 'open', moved: { x: 1, y: 2 }, session: refreshed[0] });
    // One presentation of the refresh token, in band over one tab's socket: none over HTTP.
    expect((server.hits.get('/auth/refresh') ?? 0) - refreshesBefore).toBe(0);
    await context.close();
  });

  it('without Web Locks, a tab that starts refreshing while another tab\'s refresh is on its way waits for that answer (reuse grace 0)', async () => {
    const context = await browser.newContext();
    await context.addInitScript('Object.defineProperty(navigator, "locks", { value: undefined })');
    const presented = countPresentations(context);
    const [first, second] = [await context.newPage(), await context.newPage()];
    // The first tab's refresh frame takes 400 ms to reach the server: the second tab starts its
    // own refresh after the first tab's claim window closed, while that refresh is on its way.
    await first.routeWebSocket(/\/ws$/, (ws) => {
      const upstream = ws.connectToServer();
      ws.onMessage(async (message) => {
        if (String(message).includes('"type":"refresh"')) await new Promise((resolve) => setTimeout(resolve, 400));
        upstream.send(message);
      });
      upstream.onMessage((message) => ws.send(message));
    });
    for (const page of [first, second]) await page.goto(`${server.baseUrl}/client-demo.html`);
    await logInBothTabs(first, second);
    const at = Date.now() + 300;
    const refreshed = await Promise.all([first, second].map((page, i) => page.evaluate(async ([startAt]) => {
      const { client } = (window as unknown as { tab: { client: any } }).tab;
      while (Date.now() < startAt!) await new Promise((resolve) => setTimeout(resolve, 1));
      return (await client.refresh('session')).tokens.accessToken as string;
    }, [at + i * 150])));
    expect(refreshed[0]).toBe(refreshed[1]);
    expect([...presented.values()]).toEqual([1]);
    const after = await Promise.all([first, second].map((page) => page.evaluate(async () => {
      const { conn } = (window as unknown as { tab: { conn: any } }).tab;
      return { state: conn.state, moved: await conn.request('/game', 'move', { x: 5, y: 6 }) };
    })));
    for (const tab of after) expect(tab).toMatchObject({ state: 'open', moved: { x: 5, y: 6 } });
    await context.close();
  });

  /**
   * Tab one signs up, connects and keeps its tokens where the app keeps them (localStorage);
   * tab two starts from them and connects. Each tab's client and connection are `window.tab`.
   * Scripts as text: the test runner rewrites dynamic imports inside functions it compiles.
   */
  async function logInBothTabs(first: import('playwright-core').Page, second: import('playwright-core').Page): Promise<void> {
    await first.evaluate(`(async () => {
      const { PortcullisClient } = await import('/client/index.js');
      const suffix = crypto.randomUUID().slice(0, 8);
      const client = new PortcullisClient();
      await client.signup({ username: 'tabs' + suffix, email: 'tabs' + suffix + '@example.com', password: 'pw-' + crypto.randomUUID() });
      const conn = await client.connect();
      localStorage.setItem('tokens', JSON.stringify(client.tokens));
      window.tab = { client, conn };
    })()`);
    await second.evaluate(`(async () => {
      const { PortcullisClient } = await import('/client/index.js');
      const client = new PortcullisClient({ tokens: JSON.parse(localStorage.getItem('tokens')) });
      const conn = await client.connect();
      window.tab = { client, conn };
    })()`);
  }

  /** Every refresh token the pages of `context` present, in band or over HTTP, counted per token (in this process only). */
  function countPresentations(context: import('playwright-core').BrowserContext): Map<string, number> {
    const counts = new Map<string, number>();
    const count = (token: unknown) => { if (typeof token === 'string') counts.set(token, (counts.get(token) ?? 0) + 1); };
    context.on('page', (page) => {
      page.on('websocket', (ws) => ws.on('framesent', ({ payload }) => {
        try {
          const frame = JSON.parse(String(payload)) as { type?: string; token?: unknown };
          if (frame.type === 'refresh') count(frame.token);
        } catch { /* not JSON: no refresh */ }
      }));
      page.on('request', (request) => {
        if (new URL(request.url()).pathname === '/auth/refresh') count((request.postDataJSON() as { refreshToken?: unknown } | null)?.refreshToken);
      });
    });
    return counts;
  }

  it('four tabs refreshing together for five rounds present each refresh token exactly once (reuse grace 0)', async () => {
    const context = await browser.newContext();
    const presented = countPresentations(context);
    const tabs = await Promise.all([1, 2, 3, 4].map(() => context.newPage()));
    const diagnostics: string[] = [];
    for (const page of tabs) page.on('pageerror', (error) => diagnostics.push(`page error: ${error.message}`));
    for (const page of tabs) await page.goto(`${server.baseUrl}/client-demo.html`);
    await tabs[0]!.evaluate(`(async () => {
      const { PortcullisClient } = await import('/client/index.js');
      const suffix = crypto.randomUUID().slice(0, 8);
      const client = new PortcullisClient();
      await client.signup({ username: 'rounds' + suffix, email: 'rounds' + suffix + '@example.com', password: 'pw-' + crypto.randomUUID() });
      await client.upgrade();
      localStorage.setItem('tokens', JSON.stringify(client.tokens));
    })()`);
    for (const page of tabs) {
      await page.evaluate(`(async () => {
        const { PortcullisClient } = await import('/client/index.js');
        const client = new PortcullisClient({ tokens: JSON.parse(localStorage.getItem('tokens')) });
        window.tab = { client, conn: await client.connect() };
      })()`);
    }
    const seen = new Set<string>();
    for (let round = 0; round < 5; round++) {
      const at = Date.now() + 200;
      const refreshed = await Promise.all(tabs.map((page) => page.evaluate(async (startAt) => {
        const { client } = (window as unknown as { tab: { client: any } }).tab;
        while (Date.now() < startAt) await new Promise((resolve) => setTimeout(resolve, 1));
        return (await client.refresh('session')).tokens.accessToken as string;
      }, at)));
      expect(new Set(refreshed).size, diagnostics.join('\n')).toBe(1);
      expect(seen.has(refreshed[0]!)).toBe(false);
      seen.add(refreshed[0]!);
    }
    expect(presented.size).toBe(5);
    expect([...presented.values()]).toEqual([1, 1, 1, 1, 1]);
    const after = await Promise.all(tabs.map((page) => page.evaluate(async () => {
      const { conn } = (window as unknown as { tab: { conn: any } }).tab;
      return { state: conn.state, moved: await conn.request('/game', 'move', { x: 3, y: 4 }) };
    })));
    for (const tab of after) expect(tab).toMatchObject({ state: 'open', moved: { x: 3, y: 4 } });
    await context.close();
  });

  it('a tab that never heard the announcement takes the successor from IndexedDB; nothing readable is stored', async () => {
    const context = await browser.newContext();
    const presented = countPresentations(context);
    const first = await context.newPage();
    await first.goto(`${server.baseUrl}/client-demo.html`);
    // Tab one saves its tokens where the app keeps them, refreshes, and closes before tab two opens.
    const spent = await first.evaluate(`(async () => {
      const { PortcullisClient } = await import('/client/index.js');
      const suffix = crypto.randomUUID().slice(0, 8);
      const client = new PortcullisClient();
      await client.signup({ username: 'idb' + suffix, email: 'idb' + suffix + '@example.com', password: 'pw-' + crypto.randomUUID() });
      await client.upgrade();
      localStorage.setItem('tokens', JSON.stringify(client.tokens));
      const old = client.tokens.session;
      const next = (await client.refresh('session')).tokens;
      return { old: [old.accessToken, old.refreshToken], next: [next.accessToken, next.refreshToken] };
    })()`) as { old: string[]; next: string[] };
    await first.close();
    const second = await context.newPage();
    await second.goto(`${server.baseUrl}/client-demo.html`);
    const shown = await second.evaluate(`(async () => {
      const { PortcullisClient } = await import('/client/index.js');
      const storage = Object.keys(localStorage).map((k) => k + localStorage.getItem(k)).filter((k) => !k.startsWith('tokens'));
      const client = new PortcullisClient({ tokens: JSON.parse(localStorage.getItem('tokens')) });
      const result = await client.refresh('session');
      const records = await new Promise((resolve, reject) => {
        const open = indexedDB.open('portcullis-refresh');
        open.onerror = () => reject(open.error);
        open.onsuccess = () => {
          try {
            const all = open.result.transaction('rotations').objectStore('rotations').getAll();
            all.onsuccess = () => resolve(all.result);
          } catch (error) {
            reject(error);
          }
        };
      });
      return { access: result.tokens.accessToken, storage, records: JSON.stringify(records) };
    })()`) as { access: string; storage: string[]; records: string };
    expect(shown.access).toBe(spent.next[0]);
    expect([...presented.values()]).toEqual([1]);
    expect(shown.storage).toEqual([]);
    expect(JSON.parse(shown.records)).toHaveLength(1);
    for (const token of [...spent.old, ...spent.next]) {
      expect(shown.records).not.toContain(token);
      expect(shown.records).not.toContain(token.split('.')[1] ?? token);
    }
    await context.close();
  });
});
