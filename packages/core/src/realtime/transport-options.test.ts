import { describe, expect, it } from 'vitest';
import type { GateDispatcher } from './gate-dispatcher.js';
import { DEFAULT_MAX_BUFFERED_BYTES, DEFAULT_MAX_PENDING_REQUESTS, resolveConnectionTransportOptions } from './transport-options.js';

const dispatcher = {} as GateDispatcher;

describe('resolveConnectionTransportOptions', () => {
  it('fills in the shared defaults', () => {
    expect(resolveConnectionTransportOptions({ dispatcher })).toEqual({
      dispatcher,
      registry: undefined,
      maxBufferedBytes: DEFAULT_MAX_BUFFERED_BYTES,
      maxPendingRequests: DEFAULT_MAX_PENDING_REQUESTS,
      loggers: undefined,
    });
  });

  it('refuses a limit that is not a positive integer, naming the option', () => {
    for (const bad of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => resolveConnectionTransportOptions({ dispatcher, maxBufferedBytes: bad })).toThrow(/maxBufferedBytes must be a positive integer/);
      expect(() => resolveConnectionTransportOptions({ dispatcher, maxPendingRequests: bad })).toThrow(/maxPendingRequests/);
    }
  });
});
