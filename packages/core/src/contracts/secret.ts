import { inspect } from 'node:util';

/**
 * Holds secret text so it cannot leak through `JSON.stringify`, `console.log`
 * or string interpolation. Only {@link Secret.reveal} gives the value.
 *
 * @example
 * ```ts
 * const s = new Secret('hunter2');
 * String(s); // '[secret]'
 * s.reveal(); // 'hunter2'
 * ```
 */
export class Secret {
  readonly #value: string;

  constructor(value: string) {
    this.#value = value;
  }

  reveal(): string {
    return this.#value;
  }

  get isEmpty(): boolean {
    return this.#value.length === 0;
  }

  toString(): string {
    return '[secret]';
  }

  toJSON(): string {
    return '[secret]';
  }

  [inspect.custom](): string {
    return '[secret]';
  }
}
