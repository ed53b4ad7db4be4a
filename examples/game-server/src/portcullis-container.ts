/**
 * Builds the tsyringe container every part of the game server resolves from.
 */
import 'reflect-metadata';
import { registerPortcullis, type LoggerFactory, type PortcullisConfig } from '@portcullis/core';
import { container as rootContainer, type DependencyContainer } from 'tsyringe';

/** The container, and how to release what it holds. */
export interface PortcullisContainer {
  readonly container: DependencyContainer;
  close(): Promise<void>;
}

/**
 * A child container with portcullis registered from `config`. The key guard runs
 * here, so a production start with a weak key stops before anything listens.
 *
 * @throws Error when `svc:security:mode` is not `jwt`: the example's routes need the JWT services.
 * @example
 * ```ts
 * const { container, close } = await createPortcullisContainer(loadConfig(), consoleLoggerFactory);
 * ```
 */
export async function createPortcullisContainer(config: PortcullisConfig, loggers: LoggerFactory): Promise<PortcullisContainer> {
  if (config.security.mode !== 'jwt') {
    throw new Error(`the example needs svc:security:mode = jwt (set it in svc.config.json or SVC__SECURITY__MODE=jwt; settings read from: ${config.source})`);
  }
  const container = rootContainer.createChildContainer();
  const portcullis = registerPortcullis(container, { config, loggers });
  await portcullis.ready();
  return { container, close: () => portcullis.close() };
}
