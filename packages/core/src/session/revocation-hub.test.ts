import { describe, expect, it } from 'vitest';
import type { CredentialsRevoked, RevocationEvent } from '../contracts/sessions.js';
import type { Logger } from '../contracts/logger.js';
import { LocalRevocationBus } from '../store/revocation-bus.js';
import { RevocationHub } from './revocation-hub.js';

/** A bus whose subscriptions the test counts and whose gaps it raises. */
class CountingBus extends LocalRevocationBus {
  subscriptions = 0;
  gaps: Array<() => void> = [];
  constructor() {
    super(logger([]));
  }
  override subscribe(listener: (event: CredentialsRevoked) => void): () => void {
    this.subscriptions++;
    return super.subscribe(listener);
  }
  override onGap(listener: () => void): () => void {
    this.gaps.push(listener);
    return () => (this.gaps = this.gaps.filter((l) => l !== listener));
  }
  gap(): void {
    for (const listener of [...this.gaps]) listener();
  }
}

function logger(errors: string[]): Logger {
  const quiet = () => {};
  return { debug: quiet, info: quiet, warn: quiet, error: (message) => errors.push(message) };
}

describe('RevocationHub', () => {
  it('subscribes to the bus once, however many listeners it has', () => {
    const bus = new CountingBus();
    const hub = new RevocationHub(bus, () => {}, logger([]));
    for (let i = 0; i < 5; i++) hub.onRevocation(() => {});
    expect(bus.subscriptions).toBe(1);
    expect(bus.gaps).toHaveLength(1);
  });

  it('lets the caches drop what an event names before any listener hears of it', async () => {
    const bus = new CountingBus();
    const order: string[] = [];
    const hub = new RevocationHub(bus, (event) => order.push(`caches ${event.kind}`), logger([]));
    hub.onRevocation((event) => order.push(`listener ${event.kind}`));
    await hub.publish({ sessionKeys: ['k1'], jtis: [] });
    bus.gap();
    expect(order).toEqual(['caches revoked', 'listener revoked', 'caches gap', 'listener gap']);
  });

  it('tells a gap as its own kind of event, which names nothing', () => {
    const bus = new CountingBus();
    const heard: RevocationEvent[] = [];
    const hub = new RevocationHub(bus, () => {}, logger([]));
    hub.onRevocation((event) => heard.push(event));
    bus.gap();
    expect(heard).toEqual([{ kind: 'gap' }]);
  });

  it('goes on to the other listeners when one throws, and logs it', async () => {
    const errors: string[] = [];
    const hub = new RevocationHub(new CountingBus(), () => {}, logger(errors));
    const heard: string[] = [];
    hub.onRevocation(() => {
      throw new Error('listener bug');
    });
    hub.onRevocation((event) => heard.push(event.kind));
    await hub.publish({ sessionKeys: [], jtis: ['j1'] });
    expect(heard).toEqual(['revoked']);
    expect(errors).toEqual(['revocation listener threw']);
  });

  it('hears nothing more once closed, and a listener nothing once it unsubscribed', async () => {
    const bus = new CountingBus();
    const heard: string[] = [];
    const hub = new RevocationHub(bus, () => heard.push('caches'), logger([]));
    const off = hub.onRevocation(() => heard.push('first'));
    hub.onRevocation(() => heard.push('second'));
    off();
    await hub.publish({ sessionKeys: ['k'], jtis: [] });
    expect(heard).toEqual(['caches', 'second']);
    hub.close();
    await bus.publish(Object.freeze({ kind: 'revoked', sessionKeys: ['k2'], jtis: [] }));
    bus.gap();
    expect(heard).toEqual(['caches', 'second']);
  });
});
