/**
 * Starts the example game server for a test on 127.0.0.1 (mode `jwt`, a cheap bcrypt work
 * factor, silent logs) and talks to it over real HTTP.
 */
import 'reflect-metadata';
import { randomBytes, randomUUID } from 'node:crypto';
import { loadConfig, silentLoggerFactory } from '@portcullis/core';
import { expect } from 'vitest';
import { createGameServer, type GameServer, type GameServerOptions } from '../../src/game-server.js';
import { startRealtime, type RealtimeServers } from '../../src/realtime.js';

/** One HTTP request to the example; `json` is the parsed body, or undefined when it is empty. */
export type Caller = (method: string, path: string, body?: unknown, token?: string) => Promise<{ status: number; json: any }>;

export interface ExampleServer {
  readonly server: GameServer;
  /** `http://127.0.0.1:<port>` */
  readonly base: string;
  readonly call: Caller;
  /** The TCP and UDP servers, when started with `realtime: true`. */
  readonly realtime?: RealtimeServers;
  /** Closes the realtime servers, then the HTTP server. */
  close(): Promise<void>;
}

export interface ExampleServerOptions extends Omit<GameServerOptions, 'config' | 'port'> {
  /** `SVC__…` variables on top of mode `jwt`, the key and work factor 4. */
  readonly env?: Record<string, string>;
  /** Also start the TCP and UDP servers on free ports. */
  readonly realtime?: boolean;
}

/**
 * `[name, env, available]` for `describe.each`: the session cache in memory, and on Redis at
 * `redisUrl` (available only when there is one).
 */
export function cacheProviders(redisUrl: string | null): Array<[string, Record<string, string>, boolean]> {
  return [
    ['in memory', {}, true],
    ['on Redis', { SVC__PERSISTENCE__CACHE__PROVIDER: 'redis', SVC__PERSISTENCE__CACHE__URL: redisUrl ?? '' }, redisUrl !== null],
  ];
}

/** A {@link Caller} against `base`, sending `body` as JSON and `token` as a bearer token. */
export function httpCaller(base: string): Caller {
  return async (method, path, body, token) => {
    const headers: Record<string, string> = {};
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (token) headers.authorization = `Bearer ${token}`;
    const response = await fetch(`${base}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await response.text();
    return { status: response.status, json: text ? JSON.parse(text) : undefined };
  };
}

/** Starts the example on a free port; a random key unless `env` names one. */
export async function startExampleServer(options: ExampleServerOptions = {}): Promise<ExampleServer> {
  const { env, realtime: withRealtime, ...serverOptions } = options;
  const config = loadConfig({
    env: { SVC__SECURITY__MODE: 'jwt', SVC__SECURITY__KEY: randomBytes(32).toString('base64'), SVC__SECURITY__PASSWORD__WORK_FACTOR: '4', ...env },
    tree: {},
  });
  const server = await createGameServer({ loggers: silentLoggerFactory, ...serverOptions, config, port: 0 });
  const base = (await server.listen()).http;
  const realtime = withRealtime ? await startRealtime(server.container, server.httpServer, { host: '127.0.0.1', tcpPort: 0, udpPort: 0 }) : undefined;
  return {
    server,
    base,
    call: httpCaller(base),
    realtime,
    close: async () => {
      await realtime?.close();
      await server.close();
    },
  };
}

/** Signs up a fresh player named `<prefix><8 random hex>` and returns its tokens and id. */
export async function signUp(call: Caller, prefix: string, password: string): Promise<{ accessToken: string; refreshToken: string; id: string }> {
  const username = `${prefix}${randomUUID().slice(0, 8)}`;
  const signup = await call('POST', '/auth/signup', { email: `${username}@example.com`, username, password });
  expect(signup.status).toBe(201);
  const me = await call('GET', '/api/me', undefined, signup.json.accessToken);
  return { ...signup.json, id: me.json.id };
}
