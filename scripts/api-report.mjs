#!/usr/bin/env node
/**
 * Writes one API report per package, `api/<package>.api.md`: every name each entry
 * point of its `exports` map exports, with its kind and its declaration as the
 * built `.d.ts` states it (comments and private members left out). The reports are
 * checked in, so a change to the public surface shows in review; run it after
 * `tsc -b`. With `--check` it writes nothing and fails when a report is out of date.
 *
 * @example
 * ```sh
 * npm run api                          # tsc -b, then rewrite api/*.api.md
 * node scripts/api-report.mjs --check  # exit 1 if a report differs from the build
 * ```
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';

/** The command that rewrites the reports, as failures name it. */
export const API_COMMAND = 'npm run api';

/**
 * @typedef {{ name: string, dir: string, entries: { subpath: string, types: string }[] }} PackageEntries
 * a workspace package, its folder and the `.d.ts` of each entry of its `exports` map
 */

/**
 * The packages under `repo/packages` that have an `exports` map, by folder name.
 *
 * @param {string} repo
 * @returns {PackageEntries[]}
 */
export function packageEntries(repo) {
  /** @type {{ workspaces: string[] }} */
  const root = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8'));
  return root.workspaces
    .filter((workspace) => workspace.startsWith('packages/'))
    .map((workspace) => {
      const dir = join(repo, workspace);
      /** @type {{ name: string, exports?: Record<string, string | { types?: string }> }} */
      const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
      const entries = Object.entries(manifest.exports ?? {})
        .flatMap(([subpath, target]) => (typeof target === 'object' && target.types ? [{ subpath, types: join(dir, target.types) }] : []));
      return { name: manifest.name, dir, entries };
    })
    .filter((pkg) => pkg.entries.length > 0);
}

/**
 * The import specifier of one entry: `@portcullis/core` for `.`, `@portcullis/core/transport` for `./transport`.
 *
 * @param {string} name
 * @param {string} subpath
 */
const specifierOf = (name, subpath) => (subpath === '.' ? name : `${name}/${subpath.replace(/^\.\//, '')}`);

/**
 * What a declaration is, in the words a reader uses.
 *
 * @param {ts.Declaration} node
 * @returns {string}
 */
function kindOf(node) {
  if (ts.isClassDeclaration(node)) return node.modifiers?.some((m) => m.kind === ts.SyntaxKind.AbstractKeyword) ? 'abstract class' : 'class';
  if (ts.isInterfaceDeclaration(node)) return 'interface';
  if (ts.isTypeAliasDeclaration(node)) return 'type';
  if (ts.isFunctionDeclaration(node)) return 'function';
  if (ts.isEnumDeclaration(node)) return 'enum';
  if (ts.isModuleDeclaration(node)) return 'namespace';
  if (ts.isVariableDeclaration(node)) return ts.getCombinedNodeFlags(node) & ts.NodeFlags.Const ? 'const' : 'let';
  return ts.SyntaxKind[node.kind];
}

const HIDDEN_MODIFIERS = new Set([ts.SyntaxKind.ExportKeyword, ts.SyntaxKind.DeclareKeyword, ts.SyntaxKind.DefaultKeyword]);

/**
 * A class without its private members and `#private` brand: they are in the
 * `.d.ts` for the type checker, not for callers.
 *
 * @param {ts.ClassDeclaration} node
 * @returns {ts.ClassDeclaration}
 */
function withoutPrivates(node) {
  const members = node.members.filter((member) => {
    if (member.name && ts.isPrivateIdentifier(member.name)) return false;
    return !ts.canHaveModifiers(member) || !ts.getModifiers(member)?.some((m) => m.kind === ts.SyntaxKind.PrivateKeyword);
  });
  return ts.factory.updateClassDeclaration(node, node.modifiers, node.name, node.typeParameters, node.heritageClauses, members);
}

/**
 * The declaration as source text, without comments, `export` or `declare`.
 *
 * @param {ts.Declaration} node
 * @param {ts.Printer} printer
 * @returns {string}
 */
function printDeclaration(node, printer) {
  const source = node.getSourceFile();
  if (ts.isVariableDeclaration(node)) return `${kindOf(node)} ${printer.printNode(ts.EmitHint.Unspecified, node, source)};`;
  /** @type {ts.Node} */
  let shown = ts.isClassDeclaration(node) ? withoutPrivates(node) : node;
  if (ts.canHaveModifiers(shown)) {
    const modifiers = ts.getModifiers(shown)?.filter((m) => !HIDDEN_MODIFIERS.has(m.kind));
    if (ts.isClassDeclaration(shown)) shown = ts.factory.updateClassDeclaration(shown, modifiers, shown.name, shown.typeParameters, shown.heritageClauses, shown.members);
    else if (ts.isInterfaceDeclaration(shown)) shown = ts.factory.updateInterfaceDeclaration(shown, modifiers, shown.name, shown.typeParameters, shown.heritageClauses, shown.members);
    else if (ts.isTypeAliasDeclaration(shown)) shown = ts.factory.updateTypeAliasDeclaration(shown, modifiers, shown.name, shown.typeParameters, shown.type);
    else if (ts.isFunctionDeclaration(shown)) shown = ts.factory.updateFunctionDeclaration(shown, modifiers, shown.asteriskToken, shown.name, shown.typeParameters, shown.parameters, shown.type, shown.body);
    else if (ts.isEnumDeclaration(shown)) shown = ts.factory.updateEnumDeclaration(shown, modifiers, shown.name, shown.members);
  }
  return printer.printNode(ts.EmitHint.Unspecified, shown, source);
}

/**
 * Whether a declaration carries a TSDoc comment (for a variable, on its statement).
 *
 * @param {ts.Declaration} node
 */
function isDocumented(node) {
  const holder = ts.isVariableDeclaration(node) ? node.parent.parent : node;
  return ts.getJSDocCommentsAndTags(holder).length > 0;
}

/**
 * The package a declaration file belongs to, when it is another package's build.
 *
 * @param {string} file
 * @param {PackageEntries} own
 * @param {PackageEntries[]} all
 */
function foreignPackage(file, own, all) {
  const inside = (/** @type {string} */ dir) => resolve(file).startsWith(resolve(dir) + sep);
  if (inside(own.dir)) return undefined;
  return all.find((pkg) => inside(pkg.dir))?.name ?? relative(own.dir, file);
}

/**
 * One package's report, as markdown.
 *
 * @param {PackageEntries} pkg
 * @param {PackageEntries[]} all every package, to name the origin of a re-export
 * @param {ts.Program} program
 * @returns {string}
 */
export function renderReport(pkg, all, program) {
  const checker = program.getTypeChecker();
  const printer = ts.createPrinter({ removeComments: true, newLine: ts.NewLineKind.LineFeed });
  const lines = [
    `# API report: ${pkg.name}`,
    '',
    `Every name each entry point of \`${pkg.name}\` exports, read from the built declarations. Generated by`,
    `\`${API_COMMAND}\`; do not edit by hand. A change here is a change to the public surface.`,
  ];
  for (const entry of pkg.entries) {
    const source = program.getSourceFile(entry.types);
    const module = source && checker.getSymbolAtLocation(source);
    if (!module) throw new Error(`${relative(pkg.dir, entry.types)} is missing: build with tsc -b first`);
    const exported = [...checker.getExportsOfModule(module)].sort((a, b) => a.name.localeCompare(b.name, 'en') || a.name.localeCompare(b.name));
    const resolved = exported.map((symbol) => ({ name: symbol.name, target: symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol }));
    const values = resolved.filter(({ target }) => target.flags & ts.SymbolFlags.Value).length;
    lines.push('', `## \`${specifierOf(pkg.name, entry.subpath)}\``, '', `${exported.length} names: ${values} values, ${exported.length - values} types only.`);
    for (const { name, target } of resolved) {
      const declarations = target.declarations ?? [];
      const kinds = [...new Set(declarations.map(kindOf))].join(', ');
      const origin = declarations[0] && foreignPackage(declarations[0].getSourceFile().fileName, pkg, all);
      lines.push('', `### ${name}`, '');
      if (origin) {
        lines.push(`${kinds}, re-exported from \`${origin}\`.`);
        continue;
      }
      const undocumented = !declarations.some(isDocumented) ? ' (undocumented)' : '';
      lines.push(`${kinds}${undocumented}`, '', '```ts', ...declarations.map((node) => printDeclaration(node, printer)), '```');
    }
  }
  return `${lines.join('\n')}\n`;
}

/**
 * Every report, by file name under `api/`, from the built declarations under `repo`.
 *
 * @param {string} repo
 * @returns {Map<string, string>}
 */
export function apiReports(repo) {
  const packages = packageEntries(repo);
  const program = ts.createProgram(packages.flatMap((pkg) => pkg.entries.map((entry) => entry.types)), {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    skipLibCheck: true,
    noEmit: true,
    types: ['node'],
  });
  return new Map(packages.map((pkg) => [`${pkg.name.replace(/^@[^/]+\//, '')}.api.md`, renderReport(pkg, packages, program)]));
}

/**
 * The reports under `repo/api` that differ from the build, or are missing.
 *
 * @param {string} repo
 * @returns {string[]} file names
 */
export function outdatedReports(repo) {
  return [...apiReports(repo)].filter(([file, text]) => {
    const path = join(repo, 'api', file);
    return !existsSync(path) || readFileSync(path, 'utf8') !== text;
  }).map(([file]) => file);
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..');
  if (process.argv.includes('--check')) {
    const outdated = outdatedReports(repo);
    for (const file of outdated) console.error(`api/${file} is out of date`);
    if (outdated.length > 0) {
      console.error(`the public surface changed: run \`${API_COMMAND}\` and commit api/`);
      process.exitCode = 1;
    }
  } else {
    mkdirSync(join(repo, 'api'), { recursive: true });
    for (const [file, text] of apiReports(repo)) writeFileSync(join(repo, 'api', file), text);
  }
}
