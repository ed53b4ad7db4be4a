/**
 * `npm run pack`: builds, then writes every publishable package's `npm pack`
 * tarball into `packs/` (gitignored), replacing the tarballs of an earlier run.
 * Prints one line per tarball. Also used by the consumer test.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

export const PACKAGES = ['protocol', 'core', 'express', 'ws', 'tcp', 'udp', 'client'];
const root = fileURLToPath(new URL('..', import.meta.url));

/** @typedef {{ name: string, file: string, files: string[], size: number }} Tarball */

/**
 * Packs every package into `destination` (default `<repo>/packs`) and answers
 * each tarball: package name, absolute path, the files it holds, its size.
 * Expects a built tree (`tsc -b`).
 *
 * @param {string} [destination]
 * @returns {Tarball[]}
 */
export function packAll(destination = join(root, 'packs')) {
  mkdirSync(destination, { recursive: true });
  for (const old of readdirSync(destination)) if (old.endsWith('.tgz')) rmSync(join(destination, old));
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const args = ['pack', '--json', '--pack-destination', destination, ...PACKAGES.flatMap((p) => ['-w', `packages/${p}`])];
  const out = execFileSync(npm, args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  /** @type {Array<{ name: string, filename: string, size: number, files: Array<{ path: string }> }>} */
  const packed = JSON.parse(out);
  return packed.map((entry) => ({ name: entry.name, file: join(destination, entry.filename), files: entry.files.map((f) => f.path), size: entry.size }));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  execFileSync(process.platform === 'win32' ? 'npx.cmd' : 'npx', ['tsc', '-b'], { cwd: root, stdio: 'inherit' });
  for (const tarball of packAll()) console.log(`${tarball.file}  ${(tarball.size / 1024).toFixed(1)} KiB, ${tarball.files.length} files`);
}
