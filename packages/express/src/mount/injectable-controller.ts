import 'reflect-metadata';
import { injectable } from 'tsyringe';

/** tsyringe's metadata key for `@inject` tokens, recorded per class (own only). */
const INJECTION_TOKENS = 'injectionTokens';

/**
 * Makes a controller class resolvable by tsyringe even when it only inherits its
 * constructor (e.g. `class GameAuth extends JwtAuthController {}`): tsyringe
 * reads `@inject` tokens from the class itself, so the nearest base's tokens are
 * copied onto it before it is registered as injectable.
 */
export function ensureInjectable(controller: Function): void {
  if (!Reflect.hasOwnMetadata('design:paramtypes', controller) && !Reflect.hasOwnMetadata(INJECTION_TOKENS, controller)) {
    const inherited = Reflect.getMetadata(INJECTION_TOKENS, controller) as Record<string, unknown> | undefined;
    if (inherited) Reflect.defineMetadata(INJECTION_TOKENS, { ...inherited }, controller);
  }
  injectable()(controller as new (...args: unknown[]) => unknown);
}
