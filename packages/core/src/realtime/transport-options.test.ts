import 'reflect-metadata';
import { describe, expect, it } from 'vitest';
import { silentLoggerFactory } from '../logging/logger.js';
import { ConnectionRegistry } from './connection-registry.js';
import { GateDispatcher } from './gate-dispatcher.js';
import { DEFAULT_MAX_BUFFERED_BYTES, DEFAULT_MAX_PENDING_REQUESTS, resolveConnectionTransportOptions } from './transport-options.js';

const dispatcher = Object.create(GateDispatcher.prototype) as GateDispatcher;
const registry = new ConnectionRegistry({ onRevocation: () => () => undefined }, silentLoggerFactory);

describe('resolveConnectionTransportOptions', () => {
  it('fills in the shared defaults', () => {
    expect(resolveConnectionTransportOptions({ dispatcher, registry })).toEqual({
      dispatcher,
      registry,
      maxBufferedBytes: DEFAULT_MAX_BUFFERED_BYTES,
      maxPendingRequests: DEFAULT_MAX_PENDING_REQUESTS,
      authTimeoutMs: 5000,
      maxAwaitingAuthPerAddress: 64,
      anonymousIdleTimeoutMs: 60_000,
      loggers: undefined,
    });
  });

  it('refuses a limit that is not a positive integer, naming the option', () => {
    for (const bad of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => resolveConnectionTransportOptions({ dispatcher, registry, maxBufferedBytes: bad })).toThrow(/maxBufferedBytes must be a positive integer/);
      expect(() => resolveConnectionTransportOptions({ dispatcher, registry, maxPendingRequests: bad })).toThrow(/maxPendingRequests/);
    }
  });

  it('refuses to build a transport without a registry, which revocation needs to close sockets', () => {
    expect(() => resolveConnectionTransportOptions({ dispatcher } as never)).toThrow(/needs a registry/);
    expect(() => resolveConnectionTransportOptions({ registry } as never)).toThrow(/needs a dispatcher/);
  });
});
