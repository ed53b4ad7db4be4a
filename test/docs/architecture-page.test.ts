/**
 * docs/architecture.md draws the packages, a message's way from a socket to a gate and a
 * revocation's way to a socket, and names the files on those ways: each name must be a file of
 * the repository, so the page cannot drift from the code unnoticed.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const repo = fileURLToPath(new URL('../../', import.meta.url));
const page = readFileSync(join(repo, 'docs/architecture.md'), 'utf8');
const SKIP = new Set(['node_modules', 'dist', '.git']);

function* sourceFiles(dir: string): Generator<string> {
  for (const name of readdirSync(dir)) {
    if (SKIP.has(name)) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* sourceFiles(path);
    else if (/\.(ts|mjs)$/.test(name)) yield relative(repo, path);
  }
}

/** The section of the page under `heading`, up to the next one of its level. */
function section(heading: string): string {
  const start = page.indexOf(`\n## ${heading}`);
  if (start === -1) return '';
  const end = page.indexOf('\n## ', start + 1);
  return page.slice(start, end === -1 ? undefined : end);
}

describe('docs/architecture.md', () => {
  it('draws the packages, a message to a gate, a revocation to a socket and the layers in mermaid', () => {
    for (const heading of ['Packages', 'A message, from a socket to a gate', 'A revocation, from a call to a socket', "Core's layers"]) {
      expect(section(heading), heading).toContain('```mermaid');
    }
  });

  it('names only files that exist (a path may leave out its package\'s src/)', () => {
    const files = [...['packages', 'scripts', 'test'].flatMap((root) => [...sourceFiles(join(repo, root))])];
    const named = new Set(page.match(/[\w./-]+\.(?:ts|mjs)\b/g) ?? []);
    expect(named.size).toBeGreaterThan(20);
    const missing = [...named].filter((name) => !files.some((file) => `/${file}`.endsWith(`/${name}`) || `/${file.replace('/src/', '/')}`.endsWith(`/${name}`)));
    expect(missing).toEqual([]);
  });
});
