/**
 * What a registry page and a new application read from each package.json: a
 * description, the repository, the license and keywords; the packages the
 * application shares with portcullis as peers, never as dependencies.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { PACKAGES } from '../../scripts/pack.mjs';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const read = (dir: string) => JSON.parse(readFileSync(join(repo, dir, 'package.json'), 'utf8')) as Record<string, any>;
const SHARED = ['tsyringe', 'reflect-metadata', 'express', 'ws', '@types/express', '@types/ws'];

describe.each(PACKAGES)('@portcullis/%s package.json', (name) => {
  const pkg = read(`packages/${name}`);

  it('has a description, the repository, the MIT license, keywords, and ships its LICENSE', () => {
    expect(pkg.description).toMatch(/\S{10,}/);
    expect(pkg.repository).toMatchObject({ type: 'git', url: expect.stringMatching(/^git\+https:\/\//), directory: `packages/${name}` });
    expect(pkg.license).toBe('MIT');
    expect(pkg.keywords.length).toBeGreaterThan(0);
    expect(pkg.files).toEqual(expect.arrayContaining(['dist', '!dist/.tsbuildinfo', '!dist/**/*.map', 'LICENSE']));
    expect(readFileSync(join(repo, 'packages', name, 'LICENSE'), 'utf8')).toBe(readFileSync(join(repo, 'LICENSE'), 'utf8'));
  });

  it('declares what the application shares with it as peers, not dependencies', () => {
    expect(Object.keys(pkg.dependencies ?? {}).filter((d) => SHARED.includes(d))).toEqual([]);
  });
});

it('the packages that import tsyringe, express or ws, or name their types, list them as peers', () => {
  expect(read('packages/core').peerDependencies).toMatchObject({ tsyringe: expect.any(String), 'reflect-metadata': expect.any(String) });
  expect(read('packages/express').peerDependencies).toMatchObject({ express: expect.any(String), '@types/express': expect.any(String), tsyringe: expect.any(String) });
  expect(read('packages/ws').peerDependencies).toMatchObject({ ws: expect.any(String), '@types/ws': expect.any(String) });
  expect(read('packages/client').peerDependenciesMeta).toEqual({ ws: { optional: true } });
});

it('the repository keeps the peers as root devDependencies, and rollup pinned, so npm ci installs a working tree', () => {
  const root = read('.');
  for (const peer of SHARED) expect(Object.keys(root.devDependencies), peer).toContain(peer);
  expect(root.devDependencies.rollup).toBe('4.67.4');
  expect(root.overrides.rollup).toBe('4.67.4');
});
