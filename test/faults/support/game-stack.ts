/**
 * The example game server as the fault tests run it: HTTP (`/auth`, `/api/*`)
 * and `/game` on WebSocket, TCP and UDP, on free 127.0.0.1 ports, with the
 * in-memory store or a given Redis (and accounts, optionally, in PostgreSQL). Two stacks built with the same key and the
 * same Redis are two instances of one deployment (or one instance restarted).
 */
import 'reflect-metadata';
import { loadConfig, silentLoggerFactory, type LoggerFactory } from '@portcullis/core';
import { createGameServer, type GameServer } from '../../../examples/game-server/src/game-server.js';
import { startRealtime, type RealtimeServers } from '../../../examples/game-server/src/realtime.js';
import { connectTcp, connectUdp, connectWs, type RealtimeClient } from '../../conformance/support/test-clients.js';

/** The signing key every stack of a test shares (base64 of 32 bytes). */
export const FAULT_KEY = Buffer.alloc(32, 7).toString('base64');

export interface HttpAnswer {
  readonly status: number;
  readonly json: any;
  /** The `Retry-After` header, or null. */
  readonly retryAfter: string | null;
}

export interface GameStack {
  readonly server: GameServer;
  readonly realtime: RealtimeServers;
  readonly http: string;
  readonly wsUrl: string;
  /** One JSON HTTP call; never throws for an HTTP status. */
  call(method: string, path: string, body?: unknown, token?: string): Promise<HttpAnswer>;
  /** Signs `name` up (if new) and logs in: the JWT login pair. */
  login(name: string): Promise<{ accessToken: string; refreshToken: string }>;
  /** Logs in and upgrades: the session pair. */
  session(name: string): Promise<{ accessToken: string; refreshToken: string }>;
  connect: Record<'ws' | 'tcp' | 'udp', (token?: string) => Promise<RealtimeClient>>;
  close(): Promise<void>;
}

export interface GameStackOptions {
  readonly provider: 'inmemory' | 'redis';
  readonly redisUrl?: string;
  /** Accounts in this PostgreSQL database instead of the cache. */
  readonly accountsUrl?: string;
  /** Where log lines go; default nowhere. */
  readonly loggers?: LoggerFactory;
}

const PASSWORD = 'correct horse battery staple';

export async function startGameStack(options: GameStackOptions): Promise<GameStack> {
  const env: Record<string, string> = {
    SVC__SECURITY__MODE: 'jwt',
    SVC__SECURITY__KEY: FAULT_KEY,
    SVC__SECURITY__PASSWORD__WORK_FACTOR: '4',
    SVC__PERSISTENCE__CACHE__PROVIDER: options.provider,
  };
  if (options.redisUrl) env.SVC__PERSISTENCE__CACHE__URL = options.redisUrl;
  if (options.accountsUrl) Object.assign(env, { SVC__PERSISTENCE__ACCOUNTS__PROVIDER: 'postgres', SVC__PERSISTENCE__ACCOUNTS__URL: options.accountsUrl });
  const server = await createGameServer({ config: loadConfig({ env, tree: {} }), port: 0, loggers: options.loggers ?? silentLoggerFactory });
  const { http } = await server.listen();
  const realtime = await startRealtime(server.container, server.httpServer, { host: '127.0.0.1', tcpPort: 0, udpPort: 0 });
  const wsUrl = `${http.replace(/^http/, 'ws')}/ws`;

  const call: GameStack['call'] = async (method, path, body, token) => {
    const headers: Record<string, string> = {};
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (token) headers.authorization = `Bearer ${token}`;
    const response = await fetch(`${http}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await response.text();
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = { unparsable: text };
    }
    return { status: response.status, json, retryAfter: response.headers.get('retry-after') };
  };
  const login: GameStack['login'] = async (name) => {
    await call('POST', '/auth/signup', { email: `${name}@example.com`, username: name, password: PASSWORD });
    const answer = await call('POST', '/auth/login/unamepwd', { username: name, password: PASSWORD });
    if (answer.status !== 200) throw new Error(`login of ${name} answered ${answer.status} ${JSON.stringify(answer.json)}`);
    return answer.json;
  };
  const session: GameStack['session'] = async (name) => {
    const { accessToken } = await login(name);
    const answer = await call('POST', '/auth/upgrade', { token: accessToken }, accessToken);
    if (answer.status !== 200) throw new Error(`upgrade of ${name} answered ${answer.status} ${JSON.stringify(answer.json)}`);
    return answer.json;
  };
  return {
    server,
    realtime,
    http,
    wsUrl,
    call,
    login,
    session,
    connect: {
      ws: (token) => connectWs(wsUrl, token),
      tcp: (token) => connectTcp(realtime.addresses.tcpPort, token),
      udp: (token) => connectUdp(realtime.addresses.udpPort, token),
    },
    async close() {
      await realtime.close();
      await server.close();
    },
  };
}
