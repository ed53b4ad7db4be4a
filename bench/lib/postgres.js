/**
 * A throw-away PostgreSQL for benchmarks: `initdb` in a temporary directory, the server on a
 * free 127.0.0.1 port with trust authentication, as the `postgres` user when run as root,
 * stopped and removed by the caller (killed if the bench process exits first). A small copy
 * of test/support/postgres-server.ts, which plain-JS benches cannot import; unlike the tests'
 * server it keeps fsync on, as a production database would.
 */
import { spawn } from 'node:child_process';
import { accessSync, chownSync, constants, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import pg from 'pg';

const executable = (file) => {
  try {
    return accessSync(file, constants.X_OK), true;
  } catch {
    return false;
  }
};

/** The directory with `initdb` and `postgres` (POSTGRES_BIN_DIR, /usr/lib/postgresql/<newest>/bin, PATH), or undefined. */
export function findPostgresBinDir(env = process.env) {
  const both = (dir) => executable(join(dir, 'initdb')) && executable(join(dir, 'postgres'));
  if (env.POSTGRES_BIN_DIR) return both(env.POSTGRES_BIN_DIR) ? env.POSTGRES_BIN_DIR : undefined;
  let versions = [];
  try {
    versions = readdirSync('/usr/lib/postgresql').filter((v) => /^\d+$/.test(v)).sort((a, b) => b - a);
  } catch {
    // not Debian's layout
  }
  return [...versions.map((v) => `/usr/lib/postgresql/${v}/bin`), ...(env.PATH ?? '').split(delimiter).filter(Boolean)].find(both);
}

function runAs() {
  if (process.getuid?.() !== 0) return {};
  const line = readFileSync('/etc/passwd', 'utf8').split('\n').find((l) => l.startsWith('postgres:'));
  if (!line) throw new Error('running as root without a postgres user (PostgreSQL refuses root)');
  const [, , uid, gid] = line.split(':');
  return { uid: Number(uid), gid: Number(gid) };
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer().once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

function run(file, args, user) {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { stdio: 'ignore', ...user });
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${file} exited with ${code}`))));
  });
}

async function answers(url) {
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

/** Starts PostgreSQL and resolves `{ url, stop() }` once it answers a query. */
export async function startPostgres(binDir = findPostgresBinDir()) {
  if (!binDir) throw new Error('PostgreSQL not found');
  const user = runAs();
  const dir = mkdtempSync(join(tmpdir(), 'portcullis-bench-pg-'));
  if (user.uid !== undefined) chownSync(dir, user.uid, user.gid);
  const data = join(dir, 'data');
  await run(join(binDir, 'initdb'), ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--no-locale', '--no-sync'], user);
  const port = await freePort();
  const settings = [`port=${port}`, 'listen_addresses=127.0.0.1', `unix_socket_directories=${dir}`, 'log_min_messages=fatal'];
  const child = spawn(join(binDir, 'postgres'), ['-D', data, ...settings.flatMap((s) => ['-c', s])], { stdio: 'ignore', ...user });
  const kill = () => (child.kill('SIGKILL'), rmSync(dir, { recursive: true, force: true }));
  process.once('exit', kill);
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const deadline = Date.now() + 15_000;
  while (!(await answers(url))) {
    if (Date.now() > deadline || child.exitCode !== null) {
      kill();
      throw new Error('postgres did not start');
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    url,
    async stop() {
      process.off('exit', kill);
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGINT');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
