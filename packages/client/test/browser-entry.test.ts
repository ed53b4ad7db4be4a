import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const src = resolve(dirname(fileURLToPath(import.meta.url)), '../src');
/** The one bare import a browser page maps (an import map) to the protocol's compiled entry. */
const PROTOCOL = '@portcullis/protocol';
const protocolEntry = resolve(src, '../../protocol/src/index.ts');

function staticImports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/^\s*(?:import|export)\b[^'"]*?from\s+'([^']+)'/gm)].map((m) => m[1] as string);
}

function reachable(entry: string): Map<string, string[]> {
  const seen = new Map<string, string[]>();
  const visit = (file: string): void => {
    if (seen.has(file)) return;
    const specifiers = staticImports(file);
    seen.set(file, specifiers);
    for (const s of specifiers) {
      if (s.startsWith('.')) visit(resolve(dirname(file), s.replace(/\.js$/, '.ts')));
      else if (s === PROTOCOL) visit(protocolEntry);
    }
  };
  visit(entry);
  return seen;
}

describe('the isomorphic entry', () => {
  it('loads in a browser without a bundler: every static import it reaches is relative, or @portcullis/protocol, whose own are relative', () => {
    const graph = reachable(resolve(src, 'index.ts'));
    const bare = [...graph].flatMap(([file, specifiers]) => specifiers.filter((s) => !s.startsWith('.') && s !== PROTOCOL).map((s) => `${file}: ${s}`));
    expect(graph.size).toBeGreaterThan(10);
    expect(graph.has(protocolEntry)).toBe(true);
    expect(bare).toEqual([]);
  });

  it('keeps node:net and node:dgram to the ./node entry', () => {
    const browser = [...reachable(resolve(src, 'index.ts')).keys()];
    const node = [...reachable(resolve(src, 'node.ts')).values()].flat();
    expect(browser.some((f) => f.includes('/node/'))).toBe(false);
    expect(node).toEqual(expect.arrayContaining(['node:net', 'node:dgram']));
  });
});
