import { cpus, loadavg } from 'node:os';

/** How every service bench stores its data, as its figures say. */
const STORAGE = 'better-sqlite3, file-backed, WAL, synchronous=NORMAL';

/**
 * The machine and storage a bench's figures were taken on (storage, node, cores, 1-minute load
 * average, time), the block every service bench writes into its results; `storageNote` adds
 * what the bench does differently (how it commits, where the client runs).
 */
export function benchEnvironment(storageNote?: string): {
  storage: string;
  node: string;
  cpus: number;
  load_average_1m: number;
  at: string;
} {
  return {
    storage: storageNote === undefined ? STORAGE : `${STORAGE}; ${storageNote}`,
    node: process.version,
    cpus: cpus().length,
    load_average_1m: Math.round(loadavg()[0] * 100) / 100,
    at: new Date().toISOString(),
  };
}
