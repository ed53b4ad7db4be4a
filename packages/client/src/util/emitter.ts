/**
 * A small typed event emitter that works in browsers and Node alike.
 *
 * @example
 * ```ts
 * const e = new Emitter<{ open: void; push: unknown }>();
 * const off = e.on('push', (frame) => console.log(frame));
 * e.emit('push', { type: 'chat' });
 * off();
 * ```
 */
export class Emitter<Events> {
  readonly #listeners = new Map<keyof Events, Set<(payload: never) => void>>();

  on<E extends keyof Events>(event: E, listener: (payload: Events[E]) => void): () => void {
    const set = this.#listeners.get(event) ?? new Set();
    set.add(listener as (payload: never) => void);
    this.#listeners.set(event, set);
    return () => set.delete(listener as (payload: never) => void);
  }

  emit<E extends keyof Events>(event: E, payload: Events[E]): void {
    for (const listener of [...(this.#listeners.get(event) ?? [])]) {
      try {
        (listener as (payload: Events[E]) => void)(payload);
      } catch (error) {
        // A listener's bug must not break the connection that emitted the event.
        queueMicrotask(() => { throw error; });
      }
    }
  }
}
