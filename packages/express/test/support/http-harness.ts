/**
 * Starts a portcullis express app on 127.0.0.1 for tests and talks to it with fetch.
 */
import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { LoggerFactory, PortcullisConfig, SessionStores } from '@portcullis/core';
import { createMemoryTestStack } from '@portcullis/core/testing';
import type { Express } from 'express';
import type { DependencyContainer } from 'tsyringe';
import { createPortcullisApp, type ControllerClass, type PortcullisAppOptions } from '../../src/index.js';

const TEST_KEY = randomBytes(32).toString('base64');

/** What a harness is started with. */
export interface HarnessOptions {
  readonly controllers?: readonly ControllerClass[];
  readonly env?: Record<string, string>;
  /** Where the stack and the app log; default nowhere. */
  readonly loggers?: LoggerFactory;
  /** Registers extra services before the app is built. */
  readonly register?: (container: DependencyContainer) => void;
  readonly app?: Partial<PortcullisAppOptions>;
  /** Builds the app itself instead of `createPortcullisApp`. */
  readonly build?: (container: DependencyContainer) => Express;
}

/** One answer, read whole. */
export interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  readonly json: any;
}

/** What a request may carry: a JSON body (or raw text), a bearer token, headers. */
export interface Call {
  readonly body?: unknown;
  readonly raw?: string;
  readonly token?: string;
  readonly headers?: Record<string, string>;
}

export interface Harness {
  readonly url: string;
  readonly container: DependencyContainer;
  readonly config: PortcullisConfig;
  readonly stores: SessionStores;
  request(method: string, path: string, call?: Call): Promise<Answer>;
  post(path: string, body?: unknown, token?: string): Promise<Answer>;
  get(path: string, token?: string): Promise<Answer>;
  close(): Promise<void>;
}

export async function startHarness(options: HarnessOptions): Promise<Harness> {
  const stack = await createMemoryTestStack({ key: TEST_KEY, env: options.env, loggers: options.loggers });
  const { container, config, stores } = stack;
  options.register?.(container);
  // Like the core test stacks, the app never sheds unless told to: a test run on a busy machine may stall.
  const app = options.build ? options.build(container) : createPortcullisApp(container, { controllers: options.controllers ?? [], shedWhenBehind: false, ...options.app });
  const server: Server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const request = async (method: string, path: string, call: Call = {}): Promise<Answer> => {
    const headers: Record<string, string> = { ...call.headers };
    if (call.token !== undefined) headers.authorization = `Bearer ${call.token}`;
    let body: string | undefined = call.raw;
    if (call.body !== undefined) body = JSON.stringify(call.body);
    if (body !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) headers['content-type'] = 'application/json';
    const response = await fetch(`${url}${path}`, { method, headers, body });
    const text = await response.text();
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    return { status: response.status, headers: response.headers, text, json };
  };
  return {
    url,
    container,
    config,
    stores,
    request,
    post: (path, body, token) => request('POST', path, { body, token }),
    get: (path, token) => request('GET', path, { token }),
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await stack.close();
    },
  };
}

/** The payload of a JWT, decoded without verification (to look at claims in tests). */
export function jwtPayload(token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8'));
}

/** Signs up and logs in through HTTP; answers the login response. */
export async function signupAndLogin(h: Harness, username: string, password = 'correct horse battery'): Promise<{ accessToken: string; refreshToken: string }> {
  const signup = await h.post('/auth/signup', { email: `${username}@example.com`, username, password });
  if (signup.status !== 201) throw new Error(`signup failed: ${signup.status} ${signup.text}`);
  return signup.json;
}
