/**
 * Start-up mistakes a new user makes, answered with the setting, the config file
 * that was (or was not) read, or the decorator to add: never the container's trace.
 */
import 'reflect-metadata';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ACCOUNT_STORE, ConfigError, Gate, GateDispatcher, loadConfig, PORTCULLIS_CONFIG, PortcullisError, Portal, registerPortcullis, SessionShield,
  silentLoggerFactory, type AccountStore,
} from '@portcullis/core';
import { resolveAtStartup } from '@portcullis/core/transport';
import { container as rootContainer, inject, injectable } from 'tsyringe';
import { afterAll, describe, expect, it } from 'vitest';
import { Controller, createPortcullisApp, Get, JwtAuthController } from '../src/index.js';

const DI_TRACE = /unregistered dependency token|TypeInfo not known|at position #/;
const dirs: string[] = [];
afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

function directoryWith(config?: object): string {
  const dir = mkdtempSync(join(tmpdir(), 'portcullis-startup-'));
  dirs.push(dir);
  if (config) writeFileSync(join(dir, 'svc.config.json'), JSON.stringify(config));
  return dir;
}

function containerFor(cwd: string) {
  const container = rootContainer.createChildContainer();
  registerPortcullis(container, { config: loadConfig({ cwd, env: {} }), loggers: silentLoggerFactory });
  return container;
}

/** The error `build` throws, or a failure when it throws none. */
function errorOf(build: () => unknown): Error {
  try {
    build();
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected start-up to fail');
}

class AuthController extends JwtAuthController {}

@Portal('/game')
class GamePortal {
  @SessionShield
  @Gate('move')
  move() {
    return 'moved';
  }
}

class Greeter {
  greet() {
    return 'hello';
  }
}

/** A controller as tsx or esbuild compile it: decorators applied, no `design:paramtypes`. */
function controllerWithoutMetadata(injectToken: boolean) {
  class ApiController {
    constructor(readonly greeter: Greeter) {}
    hello() {
      return this.greeter.greet();
    }
  }
  if (injectToken) inject(Greeter)(ApiController, undefined, 0);
  Get('/hello')(ApiController.prototype, 'hello', Object.getOwnPropertyDescriptor(ApiController.prototype, 'hello')!);
  Controller('/api')(ApiController);
  return ApiController;
}

describe('svc:security:mode not set', () => {
  it('names the setting and the config file that was read, when /auth is mounted', () => {
    const dir = directoryWith({ svc: { security: { password: { 'work-factor': 4 } } } });
    const error = errorOf(() => createPortcullisApp(containerFor(dir), { controllers: [AuthController] }));
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).key).toBe('svc:security:mode');
    expect(error.message).toContain('SVC__SECURITY__MODE=jwt');
    expect(error.message).toContain(`settings read from: ${join(dir, 'svc.config.json')}`);
    expect(error.message).not.toMatch(DI_TRACE);
  });

  it('says no config file was found, and where it looked, when the working directory has none', () => {
    const dir = directoryWith();
    const error = errorOf(() => createPortcullisApp(containerFor(dir), { controllers: [AuthController] }));
    expect((error as ConfigError).key).toBe('svc:security:mode');
    expect(error.message).toContain(`no svc.config.json, svc.config.yaml or svc.config.yml in ${dir}`);
    expect(error.message).not.toMatch(DI_TRACE);
  });

  it('names the setting when a portal with a session shield is registered', () => {
    const container = containerFor(directoryWith());
    const error = errorOf(() => container.resolve(GateDispatcher).register(GamePortal));
    expect((error as ConfigError).key).toBe('svc:security:mode');
    expect(error.message).not.toMatch(DI_TRACE);
  });
});

describe('a missing registration', () => {
  it('says no account store is registered, and how to register one', () => {
    @injectable()
    class Accounts {
      constructor(@inject(ACCOUNT_STORE) readonly store: AccountStore) {}
    }
    const container = rootContainer.createChildContainer();
    container.register(PORTCULLIS_CONFIG, { useValue: loadConfig({ env: {}, tree: { svc: { security: { mode: 'jwt' } } } }) });
    const error = errorOf(() => resolveAtStartup(container, Accounts));
    expect(error).toBeInstanceOf(PortcullisError);
    expect(error.message).toContain('Accounts cannot be built: no account store is registered (ACCOUNT_STORE)');
    expect(error.message).toContain('settings read from: the tree passed to loadConfig');
    expect(error.message).not.toMatch(DI_TRACE);
  });

  it('blames a missing registration of the application on that registration, not on svc:security:mode', () => {
    const SCOREBOARD = Symbol('scoreboard');
    @injectable()
    class Leaderboard {
      constructor(@inject(SCOREBOARD) readonly scores: unknown) {}
    }
    const error = errorOf(() => resolveAtStartup(containerFor(directoryWith()), Leaderboard));
    expect(error).not.toBeInstanceOf(ConfigError);
    expect(error.message).toBe('Leaderboard cannot be built: nothing is registered for Symbol(scoreboard) in this container; register it before mounting');
  });

  it('says registerPortcullis has not run when the container has no configuration', () => {
    const error = errorOf(() => createPortcullisApp(rootContainer.createChildContainer(), { controllers: [AuthController] }));
    expect(error.message).toBe('AuthController cannot be built: registerPortcullis(container) has not run on this container or a parent of it');
  });
});

describe('constructor parameters without decorator metadata (tsx, esbuild)', () => {
  const jwtConfig = () => directoryWith({ svc: { security: { mode: 'jwt', password: { 'work-factor': 4 } } } });

  it('names the controller and says to add @inject(Token)', () => {
    const Api = controllerWithoutMetadata(false);
    const error = errorOf(() => createPortcullisApp(containerFor(jwtConfig()), { controllers: [Api] }));
    expect(error).toBeInstanceOf(PortcullisError);
    expect(error.message).toMatch(/^ApiController cannot be built: the types of its constructor parameters \(#0\) were not recorded/);
    expect(error.message).toContain('add @inject(Token) to each constructor parameter; see docs/installing.md');
  });

  it('names a dependency of the controller that has no recorded types', () => {
    class Clock {
      constructor(readonly zone: string) {}
    }
    const Api = controllerWithoutMetadata(false);
    inject(Clock)(Api, undefined, 0);
    const error = errorOf(() => createPortcullisApp(containerFor(jwtConfig()), { controllers: [Api] }));
    expect(error.message).toMatch(/^ApiController cannot be built: the constructor parameter types of Clock are not known/);
    expect(error.message).toContain('add @inject(Token) to each constructor parameter; see docs/installing.md');
    expect(error.message).not.toMatch(DI_TRACE);
  });

  it('mounts the controller once each parameter carries @inject(Token)', async () => {
    const Api = controllerWithoutMetadata(true);
    const app = createPortcullisApp(containerFor(jwtConfig()), { controllers: [Api] });
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const { port } = server.address() as { port: number };
      const response = await fetch(`http://127.0.0.1:${port}/api/hello`);
      expect(await response.json()).toBe('hello');
    } finally {
      server.close();
    }
  });
});
