/**
 * The packages as a new user gets them: every package is packed, installed with its
 * peers from the npm registry into a directory outside the repository, and an app
 * is built and run there three ways (ESM with tsc NodeNext, CommonJS, tsx with
 * `@inject`), then driven over HTTP and WebSocket. The example server is copied out
 * and run against the same tarballs.
 */
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packAll } from '../../scripts/pack.mjs';
import { APP_CONFIG, appSource, appsTsconfig, type Injection } from './support/consumer-app.js';
import { driveApp } from './support/drive-app.js';
import { mustRun, runCommand, startServer } from './support/processes.js';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const rootPackage = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> };
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
/** The oldest tsyringe the peer range allows: an app on it must share its one copy with portcullis. */
const APP_TSYRINGE = '4.8.0';
// Generous: on a busy machine an install waits on the disk and the network, not on this test.
const INSTALL_TIMEOUT_MS = 240_000;

/** The environment of a child npm: this run's `npm_…` variables (workspace, lifecycle) would leak into it. */
function cleanEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (/^npm_/i.test(name) && !/^npm_config_(cache|registry|userconfig)$/i.test(name)) continue;
    if (name === 'PORTCULLIS_TEST' || name === 'NODE_OPTIONS' || name === 'VITEST' || name.startsWith('VITEST_')) continue;
    env[name] = value;
  }
  return { ...env, npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false', ...extra };
}

const npmInstall = (cwd: string, specs: readonly string[]) =>
  mustRun(npm, ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error', ...specs], { cwd, env: cleanEnv(), timeoutMs: INSTALL_TIMEOUT_MS });

let work: string;
let tarballs: Array<{ name: string; file: string; files: string[] }>;

function writeApp(name: string, type: 'module' | 'commonjs', injection: Injection): string {
  const dir = join(work, 'apps', name);
  mkdirSync(join(dir, 'src'), { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: `consumer-${name}`, private: true, type }, null, 2));
  writeFileSync(join(dir, 'tsconfig.json'), appsTsconfig(['.']));
  writeFileSync(join(dir, 'svc.config.json'), APP_CONFIG);
  writeFileSync(join(dir, 'src', 'app.ts'), appSource(injection));
  return dir;
}

const tsx = () => join(work, 'apps', 'node_modules', 'tsx', 'dist', 'cli.mjs');

describe('the packed packages in an app outside the repository', { timeout: 120_000, concurrent: true }, () => {
  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'portcullis-consumer-'));
    tarballs = packAll(join(work, 'packs'));
    const apps = join(work, 'apps');
    mkdirSync(apps, { recursive: true });
    writeFileSync(join(apps, 'package.json'), JSON.stringify({ name: 'consumer-apps', private: true }, null, 2));
    writeApp('esm', 'module', 'metadata');
    writeApp('cjs', 'commonjs', 'metadata');
    writeFileSync(join(apps, 'tsconfig.json'), appsTsconfig(['esm', 'cjs']));
    const example = join(work, 'example');
    for (const entry of ['src', 'package.json', 'tsconfig.json', 'svc.config.json', 'walkthrough.mjs', 'README.md']) {
      cpSync(join(repo, 'examples', 'game-server', entry), join(example, entry), { recursive: true });
    }
    // The apps and the copied example install and build side by side.
    const buildApps = async () => {
      await npmInstall(apps, [
        ...tarballs.map((t) => t.file),
        'express', `tsyringe@${APP_TSYRINGE}`, 'reflect-metadata', 'ws', 'tsx',
        `typescript@${rootPackage.devDependencies.typescript}`, `@types/node@${rootPackage.devDependencies['@types/node']}`,
      ]);
      await mustRun(process.execPath, [join(apps, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', apps], { cwd: apps, env: cleanEnv() });
    };
    const buildExample = async () => {
      await npmInstall(example, tarballs.map((t) => t.file));
      await mustRun(npm, ['run', 'build'], { cwd: example, env: cleanEnv() });
    };
    await Promise.all([buildApps(), buildExample()]);
  }, INSTALL_TIMEOUT_MS + 120_000);

  afterAll(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('ships a LICENSE, and no build info or source map, in every tarball', () => {
    expect(tarballs.map((t) => t.name).sort()).toEqual(['@portcullis/client', '@portcullis/core', '@portcullis/express', '@portcullis/protocol', '@portcullis/tcp', '@portcullis/udp', '@portcullis/ws']);
    for (const tarball of tarballs) {
      expect(tarball.files, tarball.name).toContain('LICENSE');
      expect(tarball.files.filter((f) => f.endsWith('.tsbuildinfo') || f.endsWith('.map') || f.endsWith('.test.js')), tarball.name).toEqual([]);
    }
  });

  it('installs the peers once: the app and portcullis share one tsyringe, the types of express and ws resolve', async () => {
    const { stdout } = await mustRun(npm, ['ls', 'tsyringe', '--all', '--parseable'], { cwd: join(work, 'apps'), env: cleanEnv() });
    expect(new Set(stdout.trim().split('\n'))).toEqual(new Set([join(work, 'apps', 'node_modules', 'tsyringe')]));
    for (const types of ['@types/express', '@types/ws']) expect(existsSync(join(work, 'apps', 'node_modules', types, 'package.json')), types).toBe(true);
  });

  it('runs an ESM app compiled by tsc (module NodeNext), over HTTP and WebSocket', async () => {
    const dir = join(work, 'apps', 'esm');
    const server = await startServer(process.execPath, ['src/app.js'], { cwd: dir, env: cleanEnv({ PORT: '0' }) });
    try {
      await driveApp(server.url);
    } finally {
      await server.stop();
    }
  });

  it('runs a CommonJS app compiled by tsc, over HTTP and WebSocket', async () => {
    const dir = join(work, 'apps', 'cjs');
    expect(readFileSync(join(dir, 'src', 'app.js'), 'utf8')).toContain('require("@portcullis/core")');
    const server = await startServer(process.execPath, ['src/app.js'], { cwd: dir, env: cleanEnv({ PORT: '0' }) });
    try {
      await driveApp(server.url);
    } finally {
      await server.stop();
    }
  });

  it('runs the app under tsx, where @inject(Token) on constructor parameters replaces decorator metadata', async () => {
    const dir = writeApp('tsx', 'module', 'inject');
    const server = await startServer(process.execPath, [tsx(), 'src/app.ts'], { cwd: dir, env: cleanEnv({ PORT: '0' }) });
    try {
      await driveApp(server.url);
    } finally {
      await server.stop();
    }
  });

  it('under tsx without @inject, stops at start-up saying what to add, without a container trace', async () => {
    const dir = writeApp('tsx-no-inject', 'module', 'metadata');
    const result = await runCommand(process.execPath, [tsx(), 'src/app.ts'], { cwd: dir, env: cleanEnv({ PORT: '0' }), timeoutMs: 60_000 });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('ApiController');
    expect(result.stderr).toContain('add @inject(Token) to each constructor parameter; see docs/installing.md');
    expect(result.stderr).not.toMatch(/TypeInfo not known|at position #/);
  });

  it('started where no config file is, says which setting is missing and where it looked', async () => {
    const app = join(work, 'apps', 'esm');
    const elsewhere = join(work, 'apps', 'elsewhere');
    mkdirSync(elsewhere, { recursive: true });
    const result = await runCommand(process.execPath, [join(app, 'src', 'app.js')], { cwd: elsewhere, env: cleanEnv({ PORT: '0' }), timeoutMs: 60_000 });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('svc:security:mode');
    expect(result.stderr).toContain(`no svc.config.json, svc.config.yaml or svc.config.yml in ${elsewhere}`);
    expect(result.stderr).not.toMatch(/unregistered dependency token|TypeInfo not known/);
  });

  it('builds and runs the example server copied out of the repository, and its walkthrough plays through', async ({ expect }) => {
    const example = join(work, 'example');
    const server = await startServer(process.execPath, ['dist/main.js'], { cwd: example, env: cleanEnv({ PORT: '0', TCP_PORT: '0', UDP_PORT: '0' }) });
    try {
      const port = (name: string) => new RegExp(`${name}\\s+127\\.0\\.0\\.1:(\\d+)`).exec(server.output())?.[1];
      await expect.poll(() => port('UDP'), { timeout: 5000 }).toBeDefined();
      const walk = await mustRun(process.execPath, ['walkthrough.mjs'], {
        cwd: example,
        env: cleanEnv({ PORTCULLIS_URL: server.url, TCP_PORT: port('TCP'), UDP_PORT: port('UDP') }),
        timeoutMs: 60_000,
      });
      expect(walk.stdout).toMatch(/udp move: .*5/);
    } finally {
      await server.stop();
    }
  });
});
