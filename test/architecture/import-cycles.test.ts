/**
 * Layers you can draw: no package imports in a circle, file to file or folder to
 * folder, and core's folders keep the layers written down below. The same checker
 * runs from `npm test` before vitest (`scripts/check-import-cycles.mjs`).
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  CORE_LAYERS,
  checkImportCycles,
  findCycles,
  folderGraph,
  importGraph,
  layerViolations,
  packageSources,
  selfImports,
} from '../../scripts/check-import-cycles.mjs';

const repo = fileURLToPath(new URL('../../', import.meta.url));
const coreSrc = join(repo, 'packages', 'core', 'src');
const fixture = fileURLToPath(new URL('./fixtures/cyclic/', import.meta.url));
const sources = packageSources(repo).map((dir) => [dir.slice(repo.length), dir, importGraph(dir)] as const);
const coreFolders = folderGraph(importGraph(coreSrc), coreSrc);

/**
 * The folder layers of `@portcullis/core`, bottom first. A folder imports only
 * folders of lower layers: `errors` and `contracts` (tokens, refusals, the config
 * shape, the logger and signing-key interfaces) import nothing above them, and
 * the composition root (`registerPortcullis` and friends) is imported by nothing
 * but the entry files (`index.ts`, `testing.ts`).
 */
const ALLOWED_CORE_LAYERS = [
  ['errors'],
  ['contracts'],
  ['config', 'logging'],
  ['runtime'],
  ['captcha', 'key', 'password', 'store'],
  ['jwt'],
  ['session'],
  ['shield'],
  ['account', 'realtime'],
  ['composition'],
  ['.'],
];

const relativeTo = (root: string) => (cycle: string[]) => cycle.map((file) => file.slice(root.length).replaceAll('\\', '/'));

describe('import cycles', () => {
  it.each(sources)('%s has no file-to-file import cycle', (_name, dir, graph) => {
    expect(findCycles(graph).map(relativeTo(dir))).toEqual([]);
  });

  it.each(sources)('%s has no folder-to-folder import cycle', (_name, dir, graph) => {
    expect(findCycles(folderGraph(graph, dir))).toEqual([]);
  });

  it('core keeps the folder layers written down here, and every folder is in one', () => {
    expect(CORE_LAYERS).toEqual(ALLOWED_CORE_LAYERS);
    expect(layerViolations(coreFolders, ALLOWED_CORE_LAYERS)).toEqual([]);
  });

  it('nothing in core imports the composition root but the entry files', () => {
    const importers = [...coreFolders].filter(([, targets]) => targets.has('composition')).map(([from]) => from);
    expect(importers).toEqual(['.']);
  });

  it('the checker passes the whole tree, as npm test runs it', () => {
    const { ok, lines } = checkImportCycles(packageSources(repo), { repo, layered: coreSrc });
    expect(lines.filter((line) => !/: (no file cycles|no folder cycles|folders keep their layers|no import of its own package by name)/.test(line))).toEqual([]);
    expect(ok).toBe(true);
  });
});

describe('the import-cycle checker', () => {
  it('finds a circle of type imports and export-from, with its file chain', () => {
    expect(findCycles(importGraph(fixture)).map(relativeTo(fixture))).toEqual([['ring/a.ts', 'ring/b.ts', 'ring/c.ts']]);
  });

  it('finds a folder circle that no file circle shows', () => {
    expect(findCycles(folderGraph(importGraph(fixture), fixture))).toEqual([
      ['down', 'up'],
    ]);
  });

  it('reports imports sideways or up the layers, and folders no layer names', () => {
    const folders = folderGraph(importGraph(fixture), fixture);
    expect(layerViolations(folders, [['down'], ['up']])).toEqual(['down -> up (layer 0 imports layer 1)', 'ring: not in the layer table']);
  });

  it('fails and prints each chain when there is a circle', () => {
    const { ok, lines } = checkImportCycles([fixture], { repo: fixture });
    expect(ok).toBe(false);
    expect(lines).toContain('.: 1 file cycle');
    expect(lines).toContain('  ring/a.ts\n    -> ring/b.ts\n    -> ring/c.ts\n    -> ring/a.ts');
    expect(lines).toContain('  down -> up -> down');
  });

  it.each(sources)('%s imports nothing of its own package by name, which would hide a circle from the relative graph', (_name, dir) => {
    expect(selfImports(dir)).toEqual([]);
  });

  it('finds a package importing itself by name', () => {
    const root = mkdtempSync(join(tmpdir(), 'self-import-'));
    try {
      mkdirSync(join(root, 'src'));
      writeFileSync(join(root, 'package.json'), JSON.stringify({ name: '@fixture/self' }));
      writeFileSync(join(root, 'src', 'a.ts'), "import { b } from '@fixture/self/b';\nimport type { C } from '@fixture/selfish';\nexport const a = b;\n");
      writeFileSync(join(root, 'src', 'b.ts'), "export { a as b } from '@fixture/self';\n");
      expect(selfImports(join(root, 'src')).map((line) => line.slice(root.length))).toEqual(['/src/a.ts imports @fixture/self/b', '/src/b.ts imports @fixture/self']);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('the packages depend on each other without a circle', () => {
    const graph = new Map<string, Set<string>>();
    for (const dir of packageSources(repo)) {
      const manifest = JSON.parse(readFileSync(join(dir, '..', 'package.json'), 'utf8')) as { name: string; dependencies?: Record<string, string>; peerDependencies?: Record<string, string> };
      const ours = Object.keys({ ...manifest.dependencies, ...manifest.peerDependencies }).filter((name) => name.startsWith('@portcullis/'));
      graph.set(manifest.name, new Set(ours));
    }
    expect(graph.size).toBeGreaterThanOrEqual(7);
    expect(findCycles(graph)).toEqual([]);
  });
});

describe('express keeps one request-auth module and a leaf for the client address', () => {
  const expressSrc = join(repo, 'packages', 'express', 'src');
  const graph = importGraph(expressSrc);
  const file = (path: string) => join(expressSrc, path);

  it('the client address imports nothing of the package', () => {
    expect([...(graph.get(file('http/client-address.ts')) ?? ['missing'])]).toEqual([]);
  });

  it("a request's auth context is built, kept and read in request-auth.ts alone", () => {
    const builders = /\b(?:function|const)\s+(authContextFromRequest|requestContext|setContextBuilder|recordPrincipal|authContextOf|establishedPrincipal)\b/;
    const defining = [...graph.keys()].filter((path) => builders.test(readFileSync(path, 'utf8'))).map((path) => path.slice(expressSrc.length + 1));
    expect(defining).toEqual(['http/request-auth.ts']);
  });
});
