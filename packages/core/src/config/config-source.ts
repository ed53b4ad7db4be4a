import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { ConfigError } from '../errors/portcullis-error.js';

/** A configuration tree as read: nested objects of unvalidated leaves. */
export type RawTree = { [key: string]: unknown };

const ENV_PREFIX = 'svc__';

function isPlainObject(value: unknown): value is RawTree {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Lower-cases keys and turns `_` into `-`, so file and environment spellings meet. */
function normaliseKey(key: string): string {
  return key.toLowerCase().replace(/_/g, '-');
}

function normaliseTree(tree: RawTree): RawTree {
  const out: RawTree = Object.create(null);
  for (const [key, value] of Object.entries(tree)) {
    out[normaliseKey(key)] = isPlainObject(value) ? normaliseTree(value) : value;
  }
  return out;
}

function setPath(tree: RawTree, path: string[], value: string): void {
  let node = tree;
  for (const segment of path.slice(0, -1)) {
    const next = node[segment];
    if (!isPlainObject(next)) node[segment] = Object.create(null);
    node = node[segment] as RawTree;
  }
  node[path[path.length - 1]!] = value;
}

/**
 * Where a parse failed, without the parser's own message: V8's JSON messages quote
 * the text around the error, which may be the key.
 */
function jsonProblem(cause: unknown, text: string): string {
  const at = /at position (\d+)/.exec(cause instanceof Error ? cause.message : '');
  if (!at) return 'invalid JSON';
  const before = text.slice(0, Number(at[1])).split('\n');
  return `invalid JSON at line ${before.length}, column ${before[before.length - 1]!.length + 1}`;
}

function yamlProblem(cause: unknown): string {
  const { code, linePos } = cause as { code?: unknown; linePos?: Array<{ line: number; col: number }> };
  const where = linePos?.[0] ? ` at line ${linePos[0].line}, column ${linePos[0].col}` : '';
  return typeof code === 'string' ? `invalid YAML (${code})${where}` : `invalid YAML${where}`;
}

/** A config file as read, and where it came from (for start-up messages). */
export interface ConfigFile {
  readonly tree: RawTree;
  /** The file's absolute path, or which files were looked for in which directory. */
  readonly source: string;
}

/**
 * Reads the config file: `SVC_CONFIG` if set, else `svc.config.json` or
 * `svc.config.yaml` (`.yml`) in `cwd`. Answers an empty tree when there is none.
 */
export function readConfigFile(env: Readonly<Record<string, string | undefined>>, cwd: string): ConfigFile {
  const named = env.SVC_CONFIG;
  const candidates = named ? [resolve(cwd, named)] : ['svc.config.json', 'svc.config.yaml', 'svc.config.yml'].map((f) => join(cwd, f));
  const file = candidates.find((f) => existsSync(f));
  if (!file) {
    if (named) throw new ConfigError('SVC_CONFIG', `file not found: ${named} (looked in ${cwd})`);
    return { tree: Object.create(null), source: `no svc.config.json, svc.config.yaml or svc.config.yml in ${resolve(cwd)}` };
  }
  let parsed: unknown;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (cause) {
    throw new ConfigError(file, `cannot be read (${(cause as NodeJS.ErrnoException).code ?? 'unknown error'})`);
  }
  const json = file.endsWith('.json');
  try {
    parsed = json ? JSON.parse(text) : parseYaml(text);
  } catch (cause) {
    throw new ConfigError(file, `cannot be parsed (${json ? jsonProblem(cause, text) : yamlProblem(cause)})`);
  }
  if (parsed === null || parsed === undefined) return { tree: Object.create(null), source: file };
  if (!isPlainObject(parsed)) throw new ConfigError(file, 'must hold an object at the top level');
  return { tree: normaliseTree(parsed), source: file };
}

/**
 * Overlays `SVC__…` environment variables on a tree. `__` separates sections,
 * names are case-insensitive, and `_` in a segment stands for `-`:
 * `SVC__SECURITY__ACCESS_TOKEN_MINUTES` sets `svc:security:access-token-minutes`.
 */
export function overlayEnvironment(tree: RawTree, env: Readonly<Record<string, string | undefined>>): RawTree {
  const out = normaliseTree(tree);
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined || !name.toLowerCase().startsWith(ENV_PREFIX)) continue;
    const path = name.split('__').map(normaliseKey);
    if (path.some((segment) => segment.length === 0 || segment === '--proto--' || segment === 'constructor')) continue;
    setPath(out, path, value);
  }
  return out;
}
