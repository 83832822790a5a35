import type { WorldName } from '../../common/environment.js';
import type { CommittedEvents } from '../trading/event-bus.js';

/**
 * How a committed batch travels in a world's Redis stream. One stream entry per batch, fields:
 * `i` the publishing instance, `s` the world's sequence number (one counter per world, whichever
 * instance publishes), `g` = "1" when the publisher lost batches of this world before this entry
 * (it could not reach Redis), `b` the batch as JSON (absent on a bare gap marker).
 */
export interface StreamEntry {
  instance: string;
  seq: number;
  gap: boolean;
  batch: CommittedEvents | null;
}

/** The stream of a world; the hash tag keeps it and its counter on one Redis Cluster slot. */
export function streamKey(world: WorldName): string {
  return `events:{${world}}`;
}

export function seqKey(world: WorldName): string {
  return `events:{${world}}:seq`;
}

/** The world of a stream key ({@link streamKey}), or null for another key. */
export function worldOfKey(key: string): WorldName | null {
  const m = /^events:\{(.+)\}$/.exec(key);
  return m === null ? null : (m[1] as WorldName);
}

/**
 * The batch as JSON. Engine events hold only strings, numbers (integer cents, epoch ms, a
 * fractional average price), booleans, nulls, arrays and plain objects, so JSON carries them
 * exactly. The delivery annotations (`remote`, `lost`) are the receiver's, never sent.
 */
export function encodeBatch(batch: CommittedEvents): string {
  const { remote: _remote, lost: _lost, ...sent } = batch;
  return JSON.stringify(sent);
}

/** A stream entry's flat field list (`[name, value, ...]`, as XREAD answers) decoded. */
export function decodeEntry(fields: readonly string[]): StreamEntry {
  const f = new Map<string, string>();
  for (let i = 0; i + 1 < fields.length; i += 2) f.set(fields[i], fields[i + 1]);
  const body = f.get('b');
  return {
    instance: f.get('i') ?? '',
    seq: Number(f.get('s') ?? NaN),
    gap: f.get('g') === '1',
    batch: body === undefined ? null : (JSON.parse(body) as CommittedEvents),
  };
}

/** Stream ids (`<ms>-<n>`) compared as Redis orders them. */
export function compareIds(a: string, b: string): number {
  const [am, an] = a.split('-').map(Number);
  const [bm, bn] = b.split('-').map(Number);
  if (am !== bm) return am < bm ? -1 : 1;
  if (an !== bn) return an < bn ? -1 : 1;
  return 0;
}
