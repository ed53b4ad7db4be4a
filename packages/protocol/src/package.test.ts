/**
 * The package stays what its README promises: no runtime dependency, and nothing
 * a browser cannot load (no Node built-in, no bare import, no Node global).
 */
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const pkg = JSON.parse(readFileSync(resolve(root, 'package.json'), 'utf8')) as Record<string, unknown>;

function reachable(entry: string): Map<string, string> {
  const seen = new Map<string, string>();
  const visit = (file: string): void => {
    if (seen.has(file)) return;
    const text = readFileSync(file, 'utf8');
    seen.set(file, text);
    for (const [, specifier] of text.matchAll(/^\s*(?:import|export)\b[^'"]*?from\s+'([^']+)'/gm)) {
      if (specifier!.startsWith('.')) visit(resolve(dirname(file), specifier!.replace(/\.js$/, '.ts')));
    }
  };
  visit(entry);
  return seen;
}

describe('@portcullis/protocol', () => {
  it('has no runtime dependency', () => {
    expect(pkg['dependencies'] ?? {}).toEqual({});
    expect(pkg['peerDependencies']).toBeUndefined();
    expect(pkg['optionalDependencies']).toBeUndefined();
  });

  it('loads in a browser: every module the entry reaches imports only its siblings and uses no Node global', () => {
    const modules = reachable(resolve(root, 'src/index.ts'));
    expect(modules.size).toBeGreaterThan(5);
    const offenders: string[] = [];
    for (const [file, text] of modules) {
      for (const [, specifier] of text.matchAll(/(?:from|import)\s*\(?\s*'([^']+)'/g)) if (!specifier!.startsWith('./')) offenders.push(`${file}: ${specifier}`);
      const code = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, '');
      for (const [name] of code.matchAll(/\b(?:Buffer|process|require|__dirname|global)\b/g)) offenders.push(`${file}: ${name}`);
    }
    expect(offenders).toEqual([]);
  });

  it('publishes its types and code through the exports map', () => {
    expect(pkg['exports']).toMatchObject({ '.': { types: './dist/index.d.ts', default: './dist/index.js' } });
    expect(pkg['files']).toEqual(expect.arrayContaining(['dist', 'README.md']));
    expect(typeof pkg['description']).toBe('string');
    expect(pkg['license']).toBe('MIT');
  });
});
