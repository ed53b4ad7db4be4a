/**
 * The root README's code sample is real (shown verbatim from docs/examples and
 * working when mounted), and every relative link of the user's documentation
 * points at a file that exists.
 */
import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  AccessTokenIssuer, GateDispatcher, loadConfig, registerPortcullis, silentLoggerFactory, TokenSessionSync, type PortcullisRegistration,
} from '@portcullis/core';
import { createPortcullisApp } from '@portcullis/express';
import { container as root } from 'tsyringe';
import { afterAll, describe, expect, it } from 'vitest';
import { GamePortal, ProfileController } from '../../docs/examples/what-it-looks-like.js';
import { fencedBlocks } from './support/markdown.js';

const repo = fileURLToPath(new URL('../../', import.meta.url));

describe('README.md "What it looks like"', () => {
  const container = root.createChildContainer();
  let portcullis: PortcullisRegistration | undefined;
  afterAll(() => portcullis?.close());

  it('shows docs/examples/what-it-looks-like.ts verbatim', () => {
    const shown = fencedBlocks(join(repo, 'README.md')).filter((b) => b.lang === 'ts').map((b) => b.text);
    expect(shown).toContain(readFileSync(join(repo, 'docs/examples/what-it-looks-like.ts'), 'utf8'));
  });

  it('works: the route needs a JWT, the gate a session token', async () => {
    const config = loadConfig({ env: {}, tree: { svc: { security: { mode: 'jwt', key: randomBytes(32).toString('base64') } } } });
    portcullis = registerPortcullis(container, { config, loggers: silentLoggerFactory });
    await portcullis.stores?.ready();
    const jwt = container.resolve(AccessTokenIssuer).issue('player-7').token;

    const server = createPortcullisApp(container, { controllers: [ProfileController] }).listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const { port } = server.address() as { port: number };
    const get = (token?: string) => fetch(`http://127.0.0.1:${port}/api/me`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
    try {
      expect((await get()).status).toBe(401);
      const me = await get(jwt);
      expect(me.status).toBe(200);
      expect(await me.json()).toEqual({ id: 'player-7' });
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }

    const dispatcher = container.resolve(GateDispatcher).register(GamePortal);
    const session = (await container.resolve(TokenSessionSync).upgrade(container.resolve(AccessTokenIssuer).issue('player-7').token)).accessToken;
    const move = { id: 1, portal: '/game', gate: 'move', data: { x: 1, y: 2 } };
    const conn = (credential?: string) => ({ clientId: 'c1', transport: 'ws' as const, remoteAddress: undefined, credential });
    expect(await dispatcher.dispatch(move, conn())).toMatchObject({ id: 1, ok: false, error: { code: 'unauthorized' } });
    expect(await dispatcher.dispatch(move, conn(jwt))).toMatchObject({ id: 1, ok: false, error: { code: 'unauthorized' } });
    expect(await dispatcher.dispatch(move, conn(session))).toEqual({ id: 1, ok: true, data: { x: 1, y: 2, by: 'player-7' } });
  });
});

describe('documentation links', () => {
  const pages = [
    'README.md',
    ...readdirSync(join(repo, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`),
    ...readdirSync(join(repo, 'packages')).map((p) => `packages/${p}/README.md`).filter((f) => existsSync(join(repo, f))),
    'examples/game-server/README.md',
  ];

  it.each(pages)('%s: every relative link resolves to a file', (page) => {
    const text = readFileSync(join(repo, page), 'utf8').replace(/^```[\s\S]*?^```$/gm, '');
    const broken = [...text.matchAll(/\]\(([^)\s]+)\)/g)]
      .map((m) => m[1]!)
      .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target) && !target.startsWith('#'))
      .map((target) => join(dirname(join(repo, page)), target.split('#')[0]!))
      .filter((file) => !existsSync(file))
      .map((file) => relative(repo, file));
    expect(broken).toEqual([]);
  });

  it('every package has a README', () => {
    for (const name of readdirSync(join(repo, 'packages'))) expect(existsSync(join(repo, 'packages', name, 'README.md')), name).toBe(true);
  });
});
