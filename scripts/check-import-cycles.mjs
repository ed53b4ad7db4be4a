#!/usr/bin/env node
/**
 * Fails when a package's sources import in a circle: file to file in every
 * `packages/*\/src`, folder to folder inside each of them, and, in
 * `@portcullis/core`, when a folder imports sideways or up its layers
 * ({@link CORE_LAYERS}).
 *
 * Every relative module specifier counts: `import`, `import type`, `export … from`,
 * `import x = require(…)`, `import(…)` and `import('…').Type`. A circle of types
 * is still a circle a reader has to untangle, so type-only imports are not excused.
 * For each import inside a circle it prints the shortest circle through it, so
 * every import that takes part in one is named at least once.
 *
 * @example
 * ```sh
 * node scripts/check-import-cycles.mjs                      # every package
 * node scripts/check-import-cycles.mjs packages/express/src  # one source folder
 * ```
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';

/** @typedef {Map<string, Set<string>>} Graph node → the nodes it imports */

const SOURCE = /\.(ts|tsx|mts|cts)$/;
const DECLARATION = /\.d\.(ts|mts|cts)$/;
const SKIP = new Set(['node_modules', 'dist']);

/**
 * The layers of `@portcullis/core`, bottom first. A folder of `src` may import
 * its own files and the folders of lower layers, never a folder of its own layer
 * or a higher one. `errors` and `contracts` are the bottom; the composition root
 * (`register…`) is the top, imported only by the entry files (the `.` folder).
 */
export const CORE_LAYERS = Object.freeze([
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
]);

/**
 * Every TypeScript source file under `dir` (declaration files excluded), sorted.
 *
 * @param {string} dir
 * @returns {string[]}
 */
export function listSourceFiles(dir) {
  /** @type {string[]} */
  const out = [];
  /** @param {string} path */
  const walk = (path) => {
    for (const name of readdirSync(path).sort()) {
      if (SKIP.has(name)) continue;
      const full = join(path, name);
      if (statSync(full).isDirectory()) walk(full);
      else if (SOURCE.test(name) && !DECLARATION.test(name)) out.push(full);
    }
  };
  walk(dir);
  return out;
}

/**
 * The module specifiers a file names, in order of appearance.
 *
 * @param {string} file
 * @returns {string[]}
 */
export function moduleSpecifiers(file) {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  /** @type {string[]} */
  const found = [];
  /** @param {ts.Node} node */
  const visit = (node) => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      found.push(node.moduleSpecifier.text);
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference) && ts.isStringLiteral(node.moduleReference.expression)) {
      found.push(node.moduleReference.expression.text);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword && node.arguments[0] && ts.isStringLiteralLike(node.arguments[0])) {
      found.push(node.arguments[0].text);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      found.push(node.argument.literal.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/**
 * The source file a relative specifier names (`./a.js` → `./a.ts`,
 * `./dir` → `./dir/index.ts`); undefined for a package name or a missing file.
 *
 * @param {string} fromFile
 * @param {string} specifier
 * @returns {string | undefined}
 */
export function resolveRelative(fromFile, specifier) {
  if (!specifier.startsWith('./') && !specifier.startsWith('../')) return undefined;
  const base = resolve(dirname(fromFile), specifier);
  const stem = base.replace(/\.(js|jsx|mjs|cjs|ts|tsx|mts|cts)$/, '');
  const extensions = base.endsWith('.mjs') ? ['.mts'] : base.endsWith('.cjs') ? ['.cts'] : ['.ts', '.tsx'];
  const candidates = [...extensions.map((ext) => stem + ext), ...extensions.map((ext) => join(base, `index${ext}`))];
  return candidates.find((candidate) => existsSync(candidate) && statSync(candidate).isFile());
}

/**
 * The file-to-file import graph of the sources under `dir`.
 *
 * @param {string} dir
 * @returns {Graph}
 */
export function importGraph(dir) {
  const files = listSourceFiles(resolve(dir));
  /** @type {Graph} */
  const graph = new Map(files.map((file) => [file, new Set()]));
  for (const file of files) {
    for (const specifier of moduleSpecifiers(file)) {
      const target = resolveRelative(file, specifier);
      if (target && graph.has(target)) graph.get(file)?.add(target);
    }
  }
  return graph;
}

/**
 * A file graph collapsed to folders: a file's folder is the first path segment
 * below `root`, or `.` for a file directly in `root`. A folder's own imports are dropped.
 *
 * @param {Graph} graph
 * @param {string} root
 * @returns {Graph}
 */
export function folderGraph(graph, root) {
  /** @param {string} file */
  const folderOf = (file) => {
    const parts = relative(resolve(root), file).split(sep);
    return parts.length > 1 ? /** @type {string} */ (parts[0]) : '.';
  };
  /** @type {Graph} */
  const folders = new Map();
  for (const [file, targets] of graph) {
    const from = folderOf(file);
    const imports = folders.get(from) ?? new Set();
    folders.set(from, imports);
    for (const target of targets) if (folderOf(target) !== from) imports.add(folderOf(target));
  }
  return folders;
}

/**
 * Tarjan's strongly connected components, each sorted.
 *
 * @param {Graph} graph
 * @returns {string[][]}
 */
export function stronglyConnected(graph) {
  let next = 0;
  /** @type {Map<string, number>} */
  const index = new Map();
  /** @type {Map<string, number>} */
  const low = new Map();
  /** @type {string[]} */
  const stack = [];
  const onStack = new Set();
  /** @type {string[][]} */
  const groups = [];
  /** @param {string} node */
  const connect = (node) => {
    index.set(node, next);
    low.set(node, next);
    next += 1;
    stack.push(node);
    onStack.add(node);
    for (const target of graph.get(node) ?? []) {
      if (!index.has(target)) {
        connect(target);
        low.set(node, Math.min(Number(low.get(node)), Number(low.get(target))));
      } else if (onStack.has(target)) {
        low.set(node, Math.min(Number(low.get(node)), Number(index.get(target))));
      }
    }
    if (low.get(node) === index.get(node)) {
      /** @type {string[]} */
      const group = [];
      let member;
      do {
        member = /** @type {string} */ (stack.pop());
        onStack.delete(member);
        group.push(member);
      } while (member !== node);
      groups.push(group.sort());
    }
  };
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) connect(node);
  return groups;
}

/**
 * The shortest path from `from` to `to` through the nodes of `within`, or undefined.
 *
 * @param {Graph} graph
 * @param {string} from
 * @param {string} to
 * @param {Set<string>} within
 * @returns {string[] | undefined}
 */
function shortestPath(graph, from, to, within) {
  /** @type {Map<string, string | undefined>} */
  const previous = new Map([[from, undefined]]);
  const queue = [from];
  for (let head = 0; head < queue.length && !previous.has(to); head++) {
    for (const target of [...(graph.get(/** @type {string} */ (queue[head])) ?? [])].sort()) {
      if (within.has(target) && !previous.has(target)) {
        previous.set(target, queue[head]);
        queue.push(target);
      }
    }
  }
  if (!previous.has(to)) return undefined;
  /** @type {string[]} */
  const path = [];
  for (let node = /** @type {string | undefined} */ (to); node !== undefined; node = previous.get(node)) path.unshift(node);
  return path;
}

/**
 * A cycle rotated to start at its smallest node, so one cycle has one spelling.
 *
 * @param {string[]} cycle
 * @returns {string[]}
 */
function canonical(cycle) {
  let start = 0;
  for (let i = 1; i < cycle.length; i++) if (/** @type {string} */ (cycle[i]) < /** @type {string} */ (cycle[start])) start = i;
  return [...cycle.slice(start), ...cycle.slice(0, start)];
}

/**
 * The cycles of a graph: for every import inside a strongly connected group (and
 * every self-import), the shortest cycle through it, without repeats. Each cycle
 * is a node list whose last node imports the first; shortest first.
 *
 * @example
 * ```js
 * findCycles(new Map([['a', new Set(['b'])], ['b', new Set(['a'])]])); // [['a', 'b']]
 * ```
 *
 * @param {Graph} graph
 * @returns {string[][]}
 */
export function findCycles(graph) {
  /** @type {Map<string, string[]>} */
  const cycles = new Map();
  for (const group of stronglyConnected(graph)) {
    const within = new Set(group);
    for (const from of group) {
      for (const to of graph.get(from) ?? []) {
        if (!within.has(to)) continue;
        const path = from === to ? [from] : shortestPath(graph, to, from, within);
        if (!path) continue;
        const cycle = canonical(path);
        cycles.set(cycle.join('\0'), cycle);
      }
    }
  }
  return [...cycles.values()].sort((a, b) => a.length - b.length || a.join('\0').localeCompare(b.join('\0')));
}

/**
 * Folder imports that go sideways or up the layers, and folders the layers do
 * not name, as report lines.
 *
 * @param {Graph} folders
 * @param {readonly (readonly string[])[]} layers
 * @returns {string[]}
 */
export function layerViolations(folders, layers = CORE_LAYERS) {
  const rank = new Map(layers.flatMap((names, i) => names.map((name) => /** @type {[string, number]} */ ([name, i]))));
  /** @type {string[]} */
  const violations = [];
  for (const from of [...folders.keys()].sort()) {
    const own = rank.get(from);
    if (own === undefined) violations.push(`${from}: not in the layer table`);
    for (const to of [...(folders.get(from) ?? [])].sort()) {
      const theirs = rank.get(to);
      if (own !== undefined && theirs !== undefined && theirs >= own) violations.push(`${from} -> ${to} (layer ${own} imports layer ${theirs})`);
    }
  }
  return violations;
}

/**
 * Imports of a package by its own name from inside its `src` (`@portcullis/core/transport` in
 * core): they leave the relative graph, so a circle through one would not show. Each finding
 * names the file and the specifier.
 *
 * @example
 * ```js
 * selfImports('packages/core/src'); // [] when core imports itself only by relative paths
 * ```
 *
 * @param {string} dir a package's `src` folder, beside its package.json
 * @returns {string[]}
 */
export function selfImports(dir) {
  const manifest = join(resolve(dir), '..', 'package.json');
  if (!existsSync(manifest)) return [];
  const name = /** @type {{ name?: string }} */ (JSON.parse(readFileSync(manifest, 'utf8'))).name;
  if (!name) return [];
  /** @type {string[]} */
  const found = [];
  for (const file of listSourceFiles(resolve(dir))) {
    for (const specifier of moduleSpecifiers(file)) if (specifier === name || specifier.startsWith(`${name}/`)) found.push(`${file} imports ${specifier}`);
  }
  return found;
}

/**
 * Checks package source folders; answers the report lines and whether all passed.
 * `layered` names the source folder whose folders must keep {@link CORE_LAYERS}.
 *
 * @example
 * ```js
 * const { ok, lines } = checkImportCycles(['packages/core/src'], { layered: 'packages/core/src' });
 * ```
 *
 * @param {string[]} srcDirs
 * @param {{ repo?: string, layered?: string, layers?: readonly (readonly string[])[] }} [options]
 * @returns {{ ok: boolean, lines: string[] }}
 */
export function checkImportCycles(srcDirs, { repo = process.cwd(), layered, layers = CORE_LAYERS } = {}) {
  /** @type {string[]} */
  const lines = [];
  let ok = true;
  /** @param {string} file */
  const show = (file) => relative(repo, file) || '.';
  /**
   * @param {string} heading
   * @param {string[]} findings
   * @param {string} clean
   */
  const report = (heading, findings, clean) => {
    if (findings.length === 0) return void lines.push(clean);
    ok = false;
    lines.push(heading, ...findings.map((finding) => `  ${finding}`));
  };
  /** @param {number} n @param {string} noun */
  const count = (n, noun) => `${n} ${noun}${n === 1 ? '' : 's'}`;
  for (const dir of srcDirs) {
    const graph = importGraph(dir);
    const cycles = findCycles(graph).map((cycle) => [...cycle, cycle[0]].map((file) => show(/** @type {string} */ (file))).join('\n    -> '));
    report(`${show(dir)}: ${count(cycles.length, 'file cycle')}`, cycles, `${show(dir)}: no file cycles (${count(graph.size, 'file')})`);
    const folders = folderGraph(graph, dir);
    const folderCycles = findCycles(folders).map((cycle) => [...cycle, cycle[0]].join(' -> '));
    report(`${show(dir)}: ${count(folderCycles.length, 'folder cycle')}`, folderCycles, `${show(dir)}: no folder cycles (${count(folders.size, 'folder')})`);
    const own = selfImports(dir).map((line) => line.replace(`${resolve(repo)}${sep}`, ''));
    report(`${show(dir)}: ${count(own.length, 'import')} of its own package by name`, own, `${show(dir)}: no import of its own package by name`);
    if (layered !== undefined && resolve(dir) === resolve(layered)) {
      const violations = layerViolations(folders, layers);
      report(`${show(dir)}: ${count(violations.length, 'import')} against the layers`, violations, `${show(dir)}: folders keep their layers`);
    }
  }
  return { ok, lines };
}

/**
 * The `src` folder of every package under `repo/packages`.
 *
 * @param {string} repo
 * @returns {string[]}
 */
export function packageSources(repo) {
  const packages = join(repo, 'packages');
  return readdirSync(packages)
    .sort()
    .map((name) => join(packages, name, 'src'))
    .filter((dir) => existsSync(dir));
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..');
  const dirs = process.argv.length > 2 ? process.argv.slice(2).map((dir) => resolve(dir)) : packageSources(repo);
  const { ok, lines } = checkImportCycles(dirs, { repo, layered: join(repo, 'packages', 'core', 'src') });
  for (const line of lines) (ok ? console.log : console.error)(line);
  if (!ok) {
    console.error('import cycles found: break each circle above by moving the shared piece down a layer');
    process.exitCode = 1;
  }
}
