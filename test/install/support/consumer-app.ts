/**
 * The application a new user writes, built outside the repository from the packed
 * tarballs: an `/auth` controller, an `/api/me` route whose controller takes a
 * constructor parameter, and a `/game` portal served over WebSocket.
 */

/** How the constructor parameter of `ApiController` is typed for tsyringe. */
export type Injection = 'metadata' | 'inject';

/**
 * The app's one source file. With `metadata` the constructor parameter relies on
 * `emitDecoratorMetadata` (tsc); with `inject` it carries `@inject(Greeter)`, which
 * works where no metadata is emitted (tsx, esbuild). No top-level await, so the same
 * file compiles to CommonJS.
 */
export function appSource(injection: Injection): string {
  const parameter = injection === 'inject' ? '@inject(Greeter) private readonly greeter: Greeter' : 'private readonly greeter: Greeter';
  return `import 'reflect-metadata';
import type { AddressInfo } from 'node:net';
import { ConnectionRegistry, Gate, GateDispatcher, JwtShield, loadConfig, Portal, registerPortcullis, SessionShield, type GateContext } from '@portcullis/core';
import { Controller, createPortcullisApp, Get, JwtAuthController, principalId } from '@portcullis/express';
import { attachWebSocketTransport } from '@portcullis/ws';
import type { Request } from 'express';
import { container, inject, injectable } from 'tsyringe';

void inject;

class AuthController extends JwtAuthController {}

@injectable()
class Greeter {
  greet(id: string | undefined): string {
    return 'hello ' + id;
  }
}

@Controller('/api')
class ApiController {
  constructor(${parameter}) {}

  @JwtShield
  @Get('/me')
  me(req: Request) {
    return { greeting: this.greeter.greet(principalId(req)) };
  }
}

@Portal('/game')
class GamePortal {
  @SessionShield
  @Gate('whoami')
  whoami(_data: unknown, _clientId: string, ctx: GateContext) {
    return { id: ctx.principal?.id };
  }
}

async function main(): Promise<void> {
  const portcullis = registerPortcullis(container, { config: loadConfig() });
  await portcullis.stores?.ready();
  const dispatcher = container.resolve(GateDispatcher).register(GamePortal);
  const app = createPortcullisApp(container, { controllers: [AuthController, ApiController] });
  const server = app.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
    console.log('listening on http://127.0.0.1:' + (server.address() as AddressInfo).port);
  });
  attachWebSocketTransport(server, { dispatcher, registry: container.resolve(ConnectionRegistry) });
}

main().catch((error: unknown) => {
  console.error('cannot start: ' + (error instanceof Error ? error.message : String(error)));
  process.exit(1);
});
`;
}

/**
 * The tsconfig of the apps compiled by tsc: NodeNext, decorators with metadata, as
 * docs/installing.md says, and no `skipLibCheck`, so every shipped `.d.ts` is checked.
 * NodeNext decides each file's output (ESM or CommonJS) by the `type` of its nearest
 * package.json, so one compilation builds both apps; output lands beside the source.
 */
export function appsTsconfig(dirs: readonly string[]): string {
  return JSON.stringify({
    compilerOptions: {
      target: 'ES2022',
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      strict: true,
      experimentalDecorators: true,
      emitDecoratorMetadata: true,
      types: ['node'],
    },
    include: dirs.map((dir) => `${dir}/src`),
  }, null, 2);
}

/** The app's settings file, found in its working directory. */
export const APP_CONFIG = JSON.stringify({ svc: { security: { mode: 'jwt', password: { 'work-factor': 4 } } } }, null, 2);
