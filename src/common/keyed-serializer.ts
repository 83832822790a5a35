/**
 * Runs asynchronous sections one at a time per key, in call order, within this process. For a
 * check-then-write that must not interleave with another of the same key (a cap counted, then a
 * row inserted), where TypeORM's awaits would otherwise let a parallel request count before this
 * one writes. One process holds the database (the DATA_DIR lock on SQLite, the instance lock on
 * PostgreSQL), so this is enough here; several processes would need the same rule in the
 * database (a lock row, a conditional update or a constraint).
 */
export class KeyedSerializer {
  private readonly tails = new Map<string, Promise<void>>();

  run<T>(key: string, section: () => Promise<T>): Promise<T> {
    const before = this.tails.get(key) ?? Promise.resolve();
    const result = before.then(section);
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return result;
  }

  /** Keys with a section running or waiting (tests: nothing is kept after the sections end). */
  get size(): number {
    return this.tails.size;
  }
}
