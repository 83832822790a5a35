/**
 * Deterministic {@link Clock} and {@link IdGenerator} implementations for tests, benchmarks and
 * the sandbox. The service passes its own wall clock and id source in production.
 */
import type { Clock, IdGenerator } from './types.js';

/** A clock that only moves when told to. */
export class ManualClock implements Clock {
  constructor(private time = 0) {}

  now(): number {
    return this.time;
  }

  set(time: number): void {
    this.time = time;
  }

  advance(ms: number): void {
    this.time += ms;
  }
}

/** Ids `prefix + counter`, one counter per generator (e.g. ord_1, fil_2, ord_3). */
export class SequentialIdGenerator implements IdGenerator {
  private counter: number;

  constructor(start = 0) {
    this.counter = start;
  }

  next(prefix: string): string {
    return prefix + ++this.counter;
  }
}
