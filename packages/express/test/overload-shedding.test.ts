/**
 * Degrade, do not spiral, over HTTP: while the server's event loop is far behind, a
 * guarded route answers 503 `overloaded` with `Retry-After` at once, its shield not
 * decided and its handler not run; open routes and the /auth routes (a logout is a
 * revocation) are served; as soon as the loop catches up, guarded routes are served again.
 */
import 'reflect-metadata';
import { connect, type Socket } from 'node:net';
import { once } from 'node:events';
import { AllowAnonymous, JwtShield, NeverShed, RateLimit, ShieldEnforcer, TokenSessionSync } from '@portcullis/core';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Request } from 'express';
import { Controller, createPortcullisApp, Get, jwtShield, principalId } from '../src/index.js';
import { signupAndLogin, startHarness, type Harness } from './support/http-harness.js';
import { ApiController, TestAuthController } from './support/test-controllers.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** An anonymous route guarded by a rate limit only, and one marked never to be shed. */
@Controller('/board')
class BoardController {
  @AllowAnonymous
  @RateLimit({ limit: 100, windowSeconds: 60, by: 'ip' })
  @Get('/top')
  top() {
    return { top: [] };
  }

  @NeverShed
  @JwtShield
  @Get('/ban')
  ban(req: Request) {
    return { banned: principalId(req) };
  }
}

/** Every route of the class is never shed, its subclass's too. */
@NeverShed
@Controller('/calm')
class CalmController {
  @JwtShield
  @Get('/me')
  me(req: Request) {
    return { id: principalId(req) };
  }
}
@Controller('/calmer')
class CalmerController extends CalmController {}

/** Blocks this process's event loop for `ms` milliseconds, as a saturated server's turns do. */
function stall(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // busy on purpose
  }
}

interface RawAnswer {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
}

/**
 * A keep-alive connection whose request is written to the socket at once (no client
 * event loop turn in between), so it waits in the kernel while this process stalls.
 */
async function openConnection(url: string): Promise<{ socket: Socket; send(path: string, token?: string, method?: 'GET' | 'POST'): Promise<RawAnswer> }> {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname);
  await once(socket, 'connect');
  return {
    socket,
    send(path, token, method = 'GET') {
      let text = '';
      const answer = new Promise<RawAnswer>((resolve, reject) => {
        const onData = (chunk: Buffer) => {
          text += chunk.toString('latin1');
          const end = text.indexOf('\r\n\r\n');
          if (end < 0) return;
          const [statusLine, ...lines] = text.slice(0, end).split('\r\n');
          const headers = Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
          const length = Number(headers['content-length'] ?? 0);
          if (text.length < end + 4 + length) return;
          socket.off('data', onData);
          resolve({ status: Number(statusLine!.split(' ')[1]), headers, body: text.slice(end + 4, end + 4 + length) });
        };
        socket.on('data', onData);
        socket.once('error', reject);
      });
      socket.write(`${method} ${path} HTTP/1.1\r\nHost: test\r\n${token ? `Authorization: Bearer ${token}\r\n` : ''}Content-Length: 0\r\n\r\n`);
      return answer;
    },
  };
}

describe('guarded HTTP routes while the event loop is behind', () => {
  let h: Harness | undefined;
  const sockets: Socket[] = [];

  async function start(app: { shedWhenBehind?: number | false } = { shedWhenBehind: 500 }): Promise<{ harness: Harness; player: string }> {
    h = await startHarness({ controllers: [TestAuthController, ApiController, BoardController, CalmerController], app });
    const player = (await signupAndLogin(h, 'player1')).accessToken;
    await sleep(100); // past any stall of an earlier test
    // A guarded request starts the process's lag gauge (it starts on first use), as a server's first request does.
    expect((await h.get('/api/me', player)).status).toBe(200);
    return { harness: h, player };
  }
  async function connections(url: string, n: number) {
    const opened = await Promise.all(Array.from({ length: n }, () => openConnection(url)));
    sockets.push(...opened.map((c) => c.socket));
    return opened;
  }

  afterEach(async () => {
    vi.restoreAllMocks();
    for (const socket of sockets.splice(0)) socket.destroy();
    await h?.close();
    h = undefined;
  });

  it('answers requests read 700 ms late with 503 overloaded and Retry-After, unrun, then serves again', async () => {
    const { harness, player } = await start();
    const [a, b, open] = await connections(harness.url, 3);
    expect((await a!.send('/api/me', player)).status).toBe(200);
    const decide = vi.spyOn(ShieldEnforcer.prototype, 'decide');
    const keepWarm = vi.spyOn(ShieldEnforcer.prototype, 'keepWarm');

    const late = [a!.send('/api/me', player), b!.send('/api/me', player)];
    const openLate = open!.send('/api/open');
    stall(700); // the requests wait in their sockets while the loop is busy
    for (const answer of await Promise.all(late)) {
      expect(answer.status).toBe(503);
      expect(JSON.parse(answer.body)).toMatchObject({ error: 'overloaded' });
      expect(Number(answer.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    }
    expect(decide).not.toHaveBeenCalled();
    expect(keepWarm).toHaveBeenCalledTimes(2);
    // A route without a shield is the application's own: it is served.
    expect(await openLate).toMatchObject({ status: 200 });

    await sleep(100); // the loop catches up
    const served = await a!.send('/api/me', player);
    expect(served.status).toBe(200);
    expect(JSON.parse(served.body)).toMatchObject({ id: expect.any(String), name: 'player1' });
    expect(decide).toHaveBeenCalledTimes(1);
  });

  it('sheds a route guarded by a rate limit only, and never a logout: a revocation is not refused for load', async () => {
    const { harness, player } = await start();
    const [board, logins, logout, other] = await connections(harness.url, 4);
    const session = (await harness.request('POST', '/auth/upgrade', { token: player, body: { token: player } })).json.accessToken as string;
    const late = [board!.send('/board/top'), logins!.send('/auth/sessions', session), logout!.send('/auth/logout', session, 'POST')];
    stall(700);
    const [shed, listed, loggedOut] = (await Promise.all(late)) as [RawAnswer, RawAnswer, RawAnswer];
    expect(shed.status).toBe(503);
    expect(JSON.parse(shed.body)).toMatchObject({ error: 'overloaded' });
    // The session routes are marked too: a player about to end a login can list them.
    expect(listed.status).toBe(200);
    expect(loggedOut.status).toBe(204);
    expect(await harness.container.resolve(TokenSessionSync).validate(session)).toBeUndefined();
    await sleep(100); // the loop catches up
    expect(await other!.send('/board/top')).toMatchObject({ status: 200 });
  });

  it('never sheds a route marked @NeverShed, on its method or its (base) class', async () => {
    const { harness, player } = await start();
    const [ban, calm, shed] = await connections(harness.url, 3);
    const late = [ban!.send('/board/ban', player), calm!.send('/calmer/me', player), shed!.send('/api/me', player)];
    stall(700);
    const [banned, calmed, refused] = (await Promise.all(late)) as [RawAnswer, RawAnswer, RawAnswer];
    expect(banned.status).toBe(200);
    expect(calmed.status).toBe(200);
    expect(refused.status).toBe(503);
  });

  it('keeps serving when shedding is turned off, however late', async () => {
    const { harness, player } = await start({ shedWhenBehind: false });
    const [a] = await connections(harness.url, 1);
    const late = a!.send('/api/me', player);
    stall(700);
    expect((await late).status).toBe(200);
  });

  it('sheds only past the lag it is given', async () => {
    const { harness, player } = await start({ shedWhenBehind: 2000 });
    const [a] = await connections(harness.url, 1);
    const late = a!.send('/api/me', player);
    stall(700);
    expect((await late).status).toBe(200);
  });

  it('@NeverShed decorates only a class or a method', () => {
    expect(() => NeverShed({}, 'field', { value: 1 })).toThrow(TypeError);
    expect(() => NeverShed({})).toThrow(TypeError);
  });

  it('refuses a limit that is not a positive number of milliseconds, or false, when the app or the middleware is built', async () => {
    const { harness } = await start();
    for (const bad of [0, -1, Number.NaN, Infinity, '500', true]) {
      expect(() => createPortcullisApp(harness.container, { controllers: [ApiController], shedWhenBehind: bad as never })).toThrow(TypeError);
      expect(() => jwtShield({ container: harness.container, shedWhenBehind: bad as never })).toThrow(TypeError);
    }
  });
});
