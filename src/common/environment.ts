/**
 * The two worlds: `live` is the real-money engine, `test` the price-isolated paper engine that
 * test keys (svc_test_) reach. Each has its own engine instance and its own SQLite database.
 */
export type Environment = 'live' | 'test';
export const ENVIRONMENTS: readonly Environment[] = ['live', 'test'];
