import { createHash } from 'node:crypto';

/**
 * Advisory lock keys, in PostgreSQL's two-int4 form: a namespace of this module and a 32-bit
 * hash of the name. The two-key space never overlaps the one-bigint space other code may lock
 * in; two names sharing a hash only put both on the same holder (locks are re-entrant in a
 * session), never two holders on one name.
 */
export type LockKey = readonly [namespace: number, key: number];

/** 'WRIT': a world's engine writer. */
export const WRITER_NAMESPACE = 0x57524954;
/** 'LEAS': a run-once timer's lease. */
export const LEASE_NAMESPACE = 0x4c454153;
/** 'WORK': an ephemeral world's create or delete under way (see work-lock.ts). */
export const WORK_NAMESPACE = 0x574f524b;

export function lockKey(namespace: number, name: string): LockKey {
  return [namespace, createHash('sha256').update(name).digest().readInt32BE(0)];
}
