import 'reflect-metadata';
import { describe, expect, it } from 'vitest';
import { Gate } from './gate.decorator.js';
import { Portal } from './portal.decorator.js';

describe('@Portal and @Gate', () => {
  it('requires a portal path that starts with a slash', () => {
    expect(() => Portal('game')).toThrow(/starting with "\/"/);
    expect(() => Portal('')).toThrow(TypeError);
    expect(() => Portal('/ga me')).toThrow(TypeError);
    expect(() => Portal(7 as never)).toThrow(TypeError);
    expect(() => Portal('/game')).not.toThrow();
  });

  it('puts @Portal on classes only and once', () => {
    const onMethod = Portal('/x') as unknown as (target: object, key: string, d: PropertyDescriptor) => void;
    expect(() => onMethod({}, 'm', { value: () => undefined })).toThrow(/class only/);
    expect(() => {
      @Portal('/a')
      @Portal('/b')
      class Both {}
      return Both;
    }).toThrow(/already has a @Portal/);
  });

  it('requires a non-empty gate name and an instance method', () => {
    expect(() => Gate('')).toThrow(TypeError);
    expect(() => Gate('mo ve')).toThrow(TypeError);
    expect(() => Gate(undefined as never)).toThrow(TypeError);
    const onClass = Gate('move') as unknown as (target: Function) => void;
    expect(() => onClass(class {})).toThrow(/instance method only/);
    expect(() => {
      class Doubled {
        @Gate('a')
        @Gate('b')
        m(): void {}
      }
      return Doubled;
    }).toThrow(/already has a @Gate/);
  });
});
