import 'reflect-metadata';
import { container, injectable } from 'tsyringe';
import { describe, expect, it } from 'vitest';

@injectable()
class Engine {
  readonly kind = 'engine';
}

@injectable()
class Car {
  constructor(readonly engine: Engine) {}
}

describe('decorator metadata under the test runner', () => {
  it('resolves a class by constructor injection, which needs design:paramtypes', () => {
    expect(Reflect.getMetadata('design:paramtypes', Car)).toEqual([Engine]);
    const car = container.resolve(Car);
    expect(car.engine).toBeInstanceOf(Engine);
  });
});
