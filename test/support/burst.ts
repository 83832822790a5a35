/**
 * Runs `task(0) … task(n - 1)` with at most `concurrency` in flight and returns their results in
 * index order. For requests that only fill a window or a list, where the rule under test does not
 * depend on their order: a suite waits for the slowest of a few dozen requests at a time instead
 * of one round trip after another. The requests that decide a rule (the boundary of a limit) are
 * still sent one by one after the burst.
 */
export async function burst<T>(
  n: number,
  task: (i: number) => Promise<T>,
  concurrency = 16,
): Promise<T[]> {
  const results = new Array<T>(n);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < n) {
      const i = next++;
      results[i] = await task(i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, n) }, worker));
  return results;
}
