import { describe, expect, it } from '@jest/globals';
import { ManualClock } from '../../common/clock/clock.js';
import { ClusterSignals, type ClusterSignal } from '../redis/cluster-signals.js';
import type { WorldCatalog, WorldRow } from './world-catalog.js';
import type { WorldDatabases } from './world-databases.service.js';
import { WorldClocks } from './world-clocks.service.js';

const WORLD = 'wld_clocks';

/** Signals between the instances of one test: each publish reaches every instance. */
class Wire {
  readonly instances: TestSignals[] = [];
  /** While false, a publish applies on its sender only (Redis away). */
  up = true;
}

class TestSignals extends ClusterSignals {
  constructor(
    private readonly wire: Wire,
    readonly cacheTtlMs: number | null,
  ) {
    super();
    wire.instances.push(this);
  }

  publish(signal: ClusterSignal): void {
    this.apply(signal);
    if (!this.wire.up) return;
    for (const other of this.wire.instances) if (other !== this) other.apply(signal);
  }
}

/** One registry row, shared by every instance (one database), and its saves. */
function sharedCatalog(): { catalog: WorldCatalog; saves: number[]; row: WorldRow } {
  const row = { id: WORLD, status: 'READY', clock_offset_ms: 0 } as unknown as WorldRow;
  const saves: number[] = [];
  const catalog = {
    one: (id: string) => (id === WORLD ? row : undefined),
    saveOffset: (_id: string, ms: number) => {
      saves.push(ms);
      row.clock_offset_ms = ms;
    },
  } as unknown as WorldCatalog;
  return { catalog, saves, row };
}

const databases = { onUnload: () => undefined } as unknown as WorldDatabases;

describe('WorldClocks on several instances', () => {
  it("a move on the writer is followed by every instance that had the world's clock, saved once", () => {
    const service = new ManualClock('2027-01-01T00:00:00Z');
    const wire = new Wire();
    const { catalog, saves } = sharedCatalog();
    const writer = new WorldClocks(service, catalog, databases, new TestSignals(wire, 5_000));
    const other = new WorldClocks(service, catalog, databases, new TestSignals(wire, 5_000));
    expect(other.for(WORLD).now()).toBe(service.now());
    writer.advance(WORLD, 3_600_000);
    expect(other.for(WORLD).now()).toBe(service.now() + 3_600_000);
    expect(other.offsetOrZero(WORLD)).toBe(3_600_000);
    // Only the writer saved it; a smaller offset heard late moves nothing back.
    expect(saves).toEqual([3_600_000]);
    other.follow(WORLD, 60_000);
    expect(other.offsetOrZero(WORLD)).toBe(3_600_000);
  });

  it('a move whose signal was lost is read from the registry row once the cache TTL has passed', async () => {
    const service = new ManualClock('2027-01-01T00:00:00Z');
    const wire = new Wire();
    const { catalog } = sharedCatalog();
    const writer = new WorldClocks(service, catalog, databases, new TestSignals(wire, 50));
    const other = new WorldClocks(service, catalog, databases, new TestSignals(wire, 50));
    expect(other.offsetOrZero(WORLD)).toBe(0);
    other.for(WORLD);
    wire.up = false;
    writer.advance(WORLD, 86_400_000);
    expect(other.for(WORLD).now()).toBe(service.now());
    await new Promise((r) => setTimeout(r, 60));
    expect(other.for(WORLD).now()).toBe(service.now() + 86_400_000);
  });
});
