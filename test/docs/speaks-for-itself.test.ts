/**
 * The project speaks for itself: its code, shipped types and docs state their own
 * rules and never point a user at working papers they have never seen.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const repo = fileURLToPath(new URL('../../', import.meta.url));
const ROOTS = ['packages', 'docs', 'examples', 'README.md', 'api', 'bench', 'loadtest', 'test', 'scripts', '.ci', 'package.json', 'vitest.config.ts'];
/** This file names what it looks for. */
const SELF = fileURLToPath(import.meta.url);
const SKIP = new Set(['node_modules', 'dist', '.git']);
const WORKING_PAPERS = /\b(the seed|seed's|seed hook|SPEC\.md|SPEC's)\b/i;

function* files(path: string): Generator<string> {
  if (statSync(path).isFile()) {
    if (/\.(ts|js|mjs|md|json)$/.test(path) || /(^|\/)\.ci\/run$/.test(path)) yield path;
    return;
  }
  for (const name of readdirSync(path)) if (!SKIP.has(name)) yield* files(join(path, name));
}

describe('the project speaks for itself', () => {
  it('no source file, shipped type, doc, test, bench or script mentions the seed or SPEC.md', () => {
    const offenders: string[] = [];
    for (const root of ROOTS) {
      for (const file of files(join(repo, root))) {
        if (file === SELF) continue;
        const lines = readFileSync(file, 'utf8').split('\n');
        lines.forEach((line, i) => {
          if (WORKING_PAPERS.test(line)) offenders.push(`${relative(repo, file)}:${i + 1}`);
        });
      }
    }
    expect(offenders).toEqual([]);
  });
});
