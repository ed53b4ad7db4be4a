/**
 * examples/game-server/README.md, followed as written: it shows walkthrough.mjs
 * verbatim, and the walkthrough run against `npm start`'s server (a real process on
 * free ports) prints what the README shows.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import bcrypt from 'bcrypt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fencedBlocks, normaliseOutput } from './support/markdown.js';
import { runNode, startNode, type RunningProcess } from './support/processes.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const example = `${root}examples/game-server/`;
const blocks = fencedBlocks(`${example}README.md`);
const shown = (lang: string) => blocks.filter((b) => b.lang === lang).map((b) => b.text);

function shownOutputContaining(marker: string): string[] {
  const output = shown('text').find((text) => text.includes(marker));
  if (output === undefined) throw new Error(`the example's README shows no output containing ${JSON.stringify(marker)}`);
  return normaliseOutput(output);
}

describe("the example's README", () => {
  let server: RunningProcess;
  let ports: { http: string; tcp: string; udp: string };

  beforeAll(async () => {
    const stale = readdirSync(`${example}src`)
      .filter((f) => f.endsWith('.ts'))
      .filter((f) => {
        const built = `${example}dist/${f.replace(/\.ts$/, '.js')}`;
        return !existsSync(built) || statSync(built).mtimeMs < statSync(`${example}src/${f}`).mtimeMs;
      });
    if (stale.length > 0) throw new Error(`examples/game-server is not built or out of date (${stale.join(', ')}); run \`npx tsc -b\` (npm test does)`);
    server = startNode(['examples/game-server/dist/main.js'], {
      cwd: root,
      env: { PORT: '0', TCP_PORT: '0', UDP_PORT: '0', SVC__SECURITY__KEY: '', ADMIN_USERS: 'Root', ADMIN_PASSWORD_HASH: bcrypt.hashSync('operator password', 4) },
    });
    const [, http, tcp, udp] = (await server.waitFor(/HTTP\s+(http:\/\/127\.0\.0\.1:\d+)[\s\S]*TCP\s+127\.0\.0\.1:(\d+)\s+UDP\s+127\.0\.0\.1:(\d+)/)) as unknown as string[];
    ports = { http: http!, tcp: tcp!, udp: udp! };
  });
  afterAll(() => server?.stop());

  it('shows walkthrough.mjs whole and the command that runs it', () => {
    expect(shown('js')).toContain(readFileSync(`${example}walkthrough.mjs`, 'utf8'));
    expect(shown('sh').join('\n')).toContain('node examples/game-server/walkthrough.mjs');
  });

  it('shows what npm start prints', () => {
    const printed = normaliseOutput(server.output()).filter((line) => !line.startsWith('[portcullis]'));
    expect(printed).toEqual(shownOutputContaining('portcullis example game server'));
  });

  it('walks signup → login → /api/me → upgrade → move on WebSocket, TCP and UDP → logout as shown', async () => {
    const result = await runNode(['examples/game-server/walkthrough.mjs'], {
      cwd: root,
      env: { PORTCULLIS_URL: ports.http, TCP_PORT: ports.tcp, UDP_PORT: ports.udp },
    });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(normaliseOutput(result.stdout)).toEqual(shownOutputContaining('session expires'));
    await server.waitFor(/player session opened \{"clientId":/);
  });

  it('grants GET /api/admin to the accounts of ADMIN_USERS made with ADMIN_PASSWORD_HASH, read from the environment (names case-insensitive)', async () => {
    const post = (path: string, body: unknown) =>
      fetch(`${ports.http}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const admin = (token: string) => fetch(`${ports.http}/api/admin`, { headers: { authorization: `Bearer ${token}` } });
    expect((await post('/auth/signup', { email: 'root@example.com', username: 'root', password: 'correct horse battery' })).status).toBe(409);
    const root = await (await post('/auth/login/unamepwd', { username: 'root', password: 'operator password' })).json();
    const player = await (await post('/auth/signup', { email: 'plain@example.com', username: 'plain', password: 'correct horse battery' })).json();
    expect((await admin(root.accessToken)).status).toBe(200);
    expect((await admin(player.accessToken)).status).toBe(403);
  });
});
