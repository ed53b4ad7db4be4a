import 'reflect-metadata';
import type { AddressInfo } from 'node:net';
import { ConnectionRegistry, Gate, GateDispatcher, loadConfig, Portal, registerPortcullis, SessionShield, type GateContext } from '@portcullis/core';
import { createPortcullisApp, JwtAuthController } from '@portcullis/express';
import { attachWebSocketTransport } from '@portcullis/ws';
import { container } from 'tsyringe';

class AuthController extends JwtAuthController {} // POST /auth/signup, /auth/login/…, /auth/upgrade, /auth/refresh, /auth/logout

@Portal('/game')
class GamePortal {
  @Gate('ping') // open to anyone
  ping() {
    return 'pong';
  }

  @SessionShield // only with a live session token
  @Gate('move')
  move(data: { x: number; y: number }, _clientId: string, ctx: GateContext) {
    return { x: data.x, y: data.y, by: ctx.principal?.id };
  }
}

const config = loadConfig({ tree: { svc: { security: { mode: 'jwt' } } } }); // SVC__… variables still win
await registerPortcullis(container, { config }).ready();
const dispatcher = container.resolve(GateDispatcher).register(GamePortal);
const http = createPortcullisApp(container, { controllers: [AuthController] }).listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () =>
  console.log(`listening on http://127.0.0.1:${(http.address() as AddressInfo).port}`),
);
attachWebSocketTransport(http, { dispatcher, registry: container.resolve(ConnectionRegistry) });
