/**
 * Starts a throw-away PostgreSQL for tests: `initdb` in a temporary directory, the server on
 * a free 127.0.0.1 port with trust authentication, run as the `postgres` user when the tests
 * run as root (PostgreSQL refuses root), stop/restart for outage tests, and the
 * directory removed when it stops or the test process exits.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { accessSync, chownSync, constants, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import pg from 'pg';
import { freePort } from './free-port.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** URL of the PostgreSQL started by the global setup; null when it is not installed (outside CI). */
    postgresUrl: string | null;
  }
}

/** A running (or stopped) PostgreSQL owned by the caller. */
export interface PostgresServer {
  readonly port: number;
  /** `postgres://postgres@127.0.0.1:<port>/postgres` (trust authentication: any password is accepted). */
  readonly url: string;
  /** Stops the server (fast shutdown, SIGKILL after 5 s); data and port stay for {@link restart}. */
  stop(): Promise<void>;
  /** Starts the server again on the same port and data and waits until it answers. */
  restart(): Promise<void>;
  /** Stops the server and removes its directory. */
  destroy(): Promise<void>;
}

const live = new Map<ChildProcess, string>();
process.once('exit', () => {
  for (const [child, dir] of live) {
    child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
});

const isExecutable = (file: string) => {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
};

/**
 * The directory holding `initdb` and `postgres`: `POSTGRES_BIN_DIR` when set (only that one,
 * so a missing path simulates a machine without PostgreSQL), else the newest
 * `/usr/lib/postgresql/<version>/bin` (where Debian puts them, off PATH), else PATH.
 */
export function findPostgresBinDir(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const hasBoth = (dir: string) => isExecutable(join(dir, 'initdb')) && isExecutable(join(dir, 'postgres'));
  if (env.POSTGRES_BIN_DIR) return hasBoth(env.POSTGRES_BIN_DIR) ? env.POSTGRES_BIN_DIR : undefined;
  let versions: string[] = [];
  try {
    versions = readdirSync('/usr/lib/postgresql').filter((v) => /^\d+$/.test(v)).sort((a, b) => Number(b) - Number(a));
  } catch {
    // no Debian layout; try PATH
  }
  const candidates = [...versions.map((v) => `/usr/lib/postgresql/${v}/bin`), ...(env.PATH ?? '').split(delimiter).filter(Boolean)];
  return candidates.find(hasBoth);
}

/** The uid and gid to run PostgreSQL as: the `postgres` user when we are root, else our own. */
function runAs(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const line = readFileSync('/etc/passwd', 'utf8').split('\n').find((l) => l.startsWith('postgres:'));
  if (!line) throw new Error('tests run as root and there is no postgres user to run PostgreSQL as (PostgreSQL refuses root)');
  const [, , uid, gid] = line.split(':');
  return { uid: Number(uid), gid: Number(gid) };
}

function run(file: string, args: string[], user: { uid: number; gid: number } | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { stdio: ['ignore', 'ignore', 'pipe'], ...user });
    let stderr = '';
    child.stderr?.on('data', (chunk) => (stderr += chunk));
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${file} exited with ${code}: ${stderr.trim().slice(-500)}`))));
  });
}

async function answers(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 500 });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

async function waitUntilAnswering(url: string, child: ChildProcess, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`postgres at ${url} exited during start-up`);
    if (await answers(url)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`postgres at ${url} did not answer within ${timeoutMs} ms`);
}

async function terminate(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGINT');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(timer);
}

/**
 * Runs `initdb` in a fresh temporary directory and starts PostgreSQL on a free port,
 * tuned for tests (no fsync), and waits until it answers a query.
 *
 * @example
 * ```ts
 * const postgres = await startPostgresServer();
 * await postgres.stop(); await postgres.restart(); await postgres.destroy();
 * ```
 */
export async function startPostgresServer(binDir = findPostgresBinDir()): Promise<PostgresServer> {
  if (!binDir) throw new Error('PostgreSQL not found (install Debian\'s postgresql or set POSTGRES_BIN_DIR)');
  const user = runAs();
  const dir = mkdtempSync(join(tmpdir(), 'portcullis-pg-'));
  if (user) chownSync(dir, user.uid, user.gid);
  const data = join(dir, 'data');
  try {
    await run(join(binDir, 'initdb'), ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--no-locale', '--no-sync'], user);
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  const launch = (port: number) => {
    const settings = [`port=${port}`, 'listen_addresses=127.0.0.1', `unix_socket_directories=${dir}`, 'fsync=off', 'synchronous_commit=off', 'full_page_writes=off', 'max_connections=200', 'shared_buffers=32MB', 'log_min_messages=fatal'];
    const child = spawn(join(binDir, 'postgres'), ['-D', data, ...settings.flatMap((s) => ['-c', s])], { stdio: ['ignore', 'ignore', 'pipe'], ...user });
    live.set(child, dir);
    child.once('exit', () => live.delete(child));
    child.stderr?.resume();
    return child;
  };
  let lastError: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
    let child = launch(port);
    try {
      await waitUntilAnswering(url, child);
    } catch (error) {
      lastError = error;
      await terminate(child);
      continue;
    }
    return {
      port,
      url,
      stop: () => terminate(child),
      restart: async () => {
        await terminate(child);
        child = launch(port);
        await waitUntilAnswering(url, child);
      },
      destroy: async () => {
        await terminate(child);
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  rmSync(dir, { recursive: true, force: true });
  throw lastError;
}

/**
 * A new, empty database on the server at `serverUrl`, so a test owns every table it sees.
 * Answers its URL, with `password` in it when given (trust authentication ignores it).
 *
 * @example
 * ```ts
 * const url = await createDatabase(inject('postgresUrl')!);
 * ```
 */
export async function createDatabase(serverUrl: string, password?: string): Promise<string> {
  const name = `test_${randomUUID().replace(/-/g, '')}`;
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  if (password !== undefined) url.password = password;
  return url.toString();
}
