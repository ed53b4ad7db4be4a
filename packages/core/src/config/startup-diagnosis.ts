/**
 * Start-up failures in the words of the application, not of the container: when a
 * controller, portal or shield cannot be built, the error names the setting and the
 * config file that was (or was not) read, or the decorator to add.
 */
import 'reflect-metadata';
import type { DependencyContainer, InjectionToken } from 'tsyringe';
import { PORTCULLIS_CONFIG } from '../contracts/injection-tokens.js';
import { ConfigError, PortcullisError } from '../errors/portcullis-error.js';

/** tsyringe's metadata key for `@inject` tokens, recorded per class. */
const INJECTION_TOKENS = 'injectionTokens';
const INJECT_HINT = 'add @inject(Token) to each constructor parameter; see docs/installing.md';
/** What only `svc:security:mode = jwt` registers, as tsyringe names it when it is missing. */
const JWT_MODE_ONLY = /^(SessionStores|Symbol\(portcullis:(account-store|captcha-verifier|IAccessTokenIssuer)\))$/;

type BuildableClass = abstract new (...args: never[]) => unknown;

// No `cause`: the container's nested trace is what this error replaces.
const cannotBuild = (target: BuildableClass, why: string) => new PortcullisError('config_invalid', `${target.name} cannot be built: ${why}`);

/**
 * Throws when `target` declares constructor parameters whose types nothing
 * recorded: code compiled without decorator metadata (tsx, esbuild, or a class
 * with no decorator of its own) and no `@inject` on those parameters. tsyringe
 * would otherwise fail with `TypeInfo not known`, or inject a base class's types.
 *
 * @example
 * ```ts
 * checkConstructorTypes(ApiController); // throws: ApiController cannot be built: … add @inject(Token) …
 * ```
 */
export function checkConstructorTypes(target: BuildableClass): void {
  if (target.length === 0 || Reflect.hasOwnMetadata('design:paramtypes', target)) return;
  const tokens = (Reflect.getOwnMetadata(INJECTION_TOKENS, target) ?? {}) as Record<number, unknown>;
  const untyped = Array.from({ length: target.length }, (_, i) => i).filter((i) => tokens[i] === undefined);
  if (untyped.length === 0) return;
  throw cannotBuild(target, `the types of its constructor parameters (${untyped.map((i) => `#${i}`).join(', ')}) were not recorded, as happens under tsx and esbuild, which emit no decorator metadata: ${INJECT_HINT}`);
}

/** The deepest of tsyringe's nested "Cannot inject … Reason:" messages. */
function innermost(message: string): string {
  return message.split(/Reason:\s*/).pop()!.trim();
}

/**
 * Turns the container's failure to build `target` into an error a person can act
 * on; answers `error` itself when it is not the container's.
 *
 * @example
 * ```ts
 * try { container.resolve(GameAuthController); } catch (e) { throw explainResolutionFailure(container, GameAuthController, e); }
 * ```
 */
export function explainResolutionFailure(container: DependencyContainer, target: BuildableClass, error: unknown): unknown {
  if (!(error instanceof Error) || error instanceof PortcullisError) return error;
  const reason = innermost(error.message);
  const unknownType = /^TypeInfo not known for "?([^"]+)"?/.exec(reason);
  const unregistered = /unregistered dependency token: "?([^"\n]+)"?/.exec(reason);
  if (!unknownType && !unregistered) return error;
  if (!container.isRegistered(PORTCULLIS_CONFIG, true)) {
    return cannotBuild(target, 'registerPortcullis(container) has not run on this container or a parent of it');
  }
  const config = container.resolve(PORTCULLIS_CONFIG);
  const source = config.source;
  const missing = (unknownType ?? unregistered)![1]!;
  if (config.security.mode !== 'jwt' && JWT_MODE_ONLY.test(missing)) {
    return new ConfigError('svc:security:mode',
      `is not set, so ${target.name} cannot be built: login, sessions and accounts are registered only with mode jwt. ` +
      `Set svc:security:mode to jwt in the config file or SVC__SECURITY__MODE=jwt (settings read from: ${source})`);
  }
  if (unregistered) {
    if (missing === 'Symbol(portcullis:account-store)') {
      return cannotBuild(target, 'no account store is registered (ACCOUNT_STORE). registerPortcullis registers one with svc:security:mode jwt; ' +
        `an application with its own user database registers its AccountStore under ACCOUNT_STORE before calling it (settings read from: ${source})`);
    }
    return cannotBuild(target, `nothing is registered for ${missing} in this container; register it before mounting`);
  }
  return cannotBuild(target, `the constructor parameter types of ${missing} are not known to tsyringe. Code run by tsx or esbuild carries no decorator metadata: ` +
    `${INJECT_HINT}. With tsc, enable emitDecoratorMetadata and decorate the class; an application with two copies of tsyringe fails the same way (npm ls tsyringe)`);
}

/**
 * Resolves a class at start-up (a controller, portal or shield): checks that its
 * constructor parameters are typed, then resolves it, explaining a failure with
 * {@link explainResolutionFailure}.
 *
 * @example
 * ```ts
 * const controller = resolveAtStartup(container, ApiController);
 * ```
 */
export function resolveAtStartup<T>(container: DependencyContainer, target: abstract new (...args: never[]) => T): T {
  if (!container.isRegistered(target as InjectionToken<T>, true)) checkConstructorTypes(target);
  try {
    return container.resolve(target as unknown as InjectionToken<T>);
  } catch (error) {
    throw explainResolutionFailure(container, target, error);
  }
}
