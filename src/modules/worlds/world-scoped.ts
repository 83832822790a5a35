import type { WorldName } from '../../common/environment.js';

/**
 * One `T` per world, made on first use: the live and paper values at once, an ephemeral world's
 * when a request first reaches it, dropped when that world is unloaded or deleted. How a module
 * holds its per-world repositories without knowing ephemeral worlds exist.
 */
export class WorldScoped<T> {
  private readonly made = new Map<WorldName, T>();

  constructor(private readonly make: (world: WorldName) => T) {}

  get(world: WorldName): T {
    let v = this.made.get(world);
    if (v === undefined) {
      v = this.make(world);
      this.made.set(world, v);
    }
    return v;
  }

  /** The world's value if it was made already (never makes one). */
  peek(world: WorldName): T | undefined {
    return this.made.get(world);
  }

  /** The values made so far (the live and paper ones, and those of loaded worlds). */
  entries(): IterableIterator<[WorldName, T]> {
    return this.made.entries();
  }

  drop(world: WorldName): void {
    this.made.delete(world);
  }
}
