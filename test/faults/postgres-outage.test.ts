/**
 * PostgreSQL, as the account store of the example server, stopped and started again:
 * signup and login answer HTTP 503 `unavailable` while it is down (never a connection
 * string, never a crash), JWTs and sessions issued before keep working, and both heal by themselves when
 * it is back. Accounts outlive the server process and its in-memory cache; a server whose
 * database does not answer at start-up does not start.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LoggerFactory } from '@portcullis/core';
import { createDatabase, findPostgresBinDir, startPostgresServer, type PostgresServer } from '../support/postgres-server.js';
import { startGameStack, type GameStack } from './support/game-stack.js';

const hasPostgres = findPostgresBinDir() !== undefined;
const label = (name: string) => (hasPostgres ? name : `${name} — SKIPPED, PostgreSQL not found`);
const PG_PASSWORD = 'pg-password-never-shown';
const PASSWORD = 'correct horse battery staple';

function recordingLoggers() {
  const lines: Array<{ level: string; category: string; message: string; fields?: Record<string, unknown> }> = [];
  const loggers: LoggerFactory = {
    create: (category) => {
      const at = (level: string) => (message: string, fields?: Record<string, unknown>) => void lines.push({ level, category, message, fields });
      return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
    },
  };
  return { loggers, lines };
}

describe.skipIf(!hasPostgres)(label('PostgreSQL account store stopped and restarted'), () => {
  let postgres: PostgresServer;
  let accountsUrl: string;
  let stack: GameStack;
  const { loggers, lines } = recordingLoggers();
  const escaped: unknown[] = [];
  const onEscape = (error: unknown) => escaped.push(error);

  beforeAll(async () => {
    process.on('unhandledRejection', onEscape);
    process.on('uncaughtException', onEscape);
    postgres = await startPostgresServer();
    accountsUrl = await createDatabase(postgres.url, PG_PASSWORD);
    stack = await startGameStack({ provider: 'inmemory', accountsUrl, loggers });
  });
  afterAll(async () => {
    process.off('unhandledRejection', onEscape);
    process.off('uncaughtException', onEscape);
    await stack?.close();
    await postgres?.destroy();
  });

  it('answers 503 unavailable for signup and login while down, keeps JWTs and sessions serving, and heals when it is back', async () => {
    const signup = await stack.call('POST', '/auth/signup', { email: 'ada@example.com', username: 'Ada', password: PASSWORD });
    expect(signup.status).toBe(201);
    const { accessToken } = await stack.login('sam');
    const session = await stack.session('sue');

    await postgres.stop();
    const answers = [
      await stack.call('POST', '/auth/signup', { email: 'bob@example.com', username: 'bob', password: PASSWORD }),
      await stack.call('POST', '/auth/login/unamepwd', { username: 'ada', password: PASSWORD }),
      await stack.call('POST', '/auth/login/emailpwd', { email: 'ada@example.com', password: PASSWORD }),
    ];
    for (const answer of answers) {
      expect(answer.status).toBe(503);
      expect(answer.json).toEqual({ error: 'unavailable', message: expect.any(String) });
      expect(answer.retryAfter).toBe('1');
      expect(JSON.stringify(answer.json)).not.toMatch(/postgres|pg-password|127\.0\.0\.1/i);
    }
    expect((await stack.call('GET', '/api/me', undefined, accessToken)).json).toMatchObject({ name: 'sam' });
    const ws = await stack.connect.ws(session.accessToken);
    expect(await ws.request('/game', 'move', { x: 1, y: 2 })).toMatchObject({ ok: true });
    await ws.close();

    await postgres.restart();
    expect((await stack.call('POST', '/auth/login/unamepwd', { username: 'ADA', password: PASSWORD })).status).toBe(200);
    expect((await stack.call('POST', '/auth/signup', { email: 'bob@example.com', username: 'bob', password: PASSWORD })).status).toBe(201);
    expect((await stack.call('POST', '/auth/signup', { email: 'BOB@example.com', username: 'bobby', password: PASSWORD })).status).toBe(409);

    const accountLines = lines.filter((line) => line.category === 'portcullis:accounts');
    expect(accountLines.map((line) => line.level)).toEqual(['warn', 'info']);
    expect(accountLines[0]!.message).toMatch(/postgres account store failed/);
    expect(accountLines[1]!.message).toBe('postgres connection restored');
    expect(JSON.stringify(lines)).not.toContain(PG_PASSWORD);
    expect(JSON.stringify(lines)).not.toContain(accountsUrl);
    expect(escaped).toEqual([]);
  });

  it('keeps every account when the server and its in-memory cache restart', async () => {
    await stack.close();
    stack = await startGameStack({ provider: 'inmemory', accountsUrl, loggers });
    expect((await stack.call('POST', '/auth/login/unamepwd', { username: 'ada', password: PASSWORD })).status).toBe(200);
    expect((await stack.call('POST', '/auth/signup', { email: 'other@example.com', username: 'ADA', password: PASSWORD })).status).toBe(409);
  });

  it('does not start while the database does not answer, and says so without the URL', async () => {
    await postgres.stop();
    try {
      const failed = await startGameStack({ provider: 'inmemory', accountsUrl, loggers }).then(
        async (started) => (await started.close(), undefined),
        (error: unknown) => error,
      );
      expect(failed).toMatchObject({ code: 'unavailable' });
      expect(String((failed as Error).message)).not.toMatch(/pg-password|postgres:\/\//);
    } finally {
      await postgres.restart();
    }
  });
});
