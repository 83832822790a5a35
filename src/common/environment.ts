/**
 * The two worlds: `live` is the real-money engine, `test` the price-isolated paper engine that
 * test keys (svc_test_) reach. Each has its own engine instance and its own SQLite database.
 */
export type Environment = 'live' | 'test';
export const ENVIRONMENTS: readonly Environment[] = ['live', 'test'];

/** An ephemeral world's id (POST /sandbox/worlds): a private paper world with its own file. */
export type WorldId = `wld_${string}`;

/**
 * Which world a request reads and writes: the live world, the shared paper world, or an
 * ephemeral world. Routing (engines, databases, realtime, webhooks) keys on this; `Environment`
 * stays what answers say (`environment: "test"` inside a world, which is paper).
 */
export type WorldName = Environment | WorldId;

export function isWorldId(w: string): w is WorldId {
  return w.startsWith('wld_');
}

/** Whether a world is paper money: the shared paper world or any ephemeral world. */
export function isPaperWorld(w: WorldName): boolean {
  return w !== 'live';
}

/** The environment a world answers as (`test` for every paper world). */
export function environmentOf(w: WorldName): Environment {
  return w === 'live' ? 'live' : 'test';
}
