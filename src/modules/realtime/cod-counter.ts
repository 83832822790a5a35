/**
 * How many realtime connections a key holds, for cancel-on-disconnect: on this instance only
 * ({@link LocalCodCounter}, running alone) or summed over every instance on one Redis
 * (redis-cod-counter.ts).
 */
export interface CodCounter {
  /** A connection authenticated with the key opened here. */
  connected(keyId: string): Promise<void>;
  /**
   * One closed here. `arm`: this call took the total to 0, so this instance (and no other) arms
   * the key. `total`: the connections left.
   */
  disconnected(keyId: string): Promise<{ total: number; arm: boolean }>;
  /** The key's connections now, over every instance counted. */
  total(keyId: string): Promise<number>;
  /**
   * At boot: whether this instance arms `keyId` (its connections elsewhere are 0 and no other
   * instance starting at the same time claimed it). Alone: always.
   */
  claimAtBoot(keyId: string, graceMs: number): Promise<boolean>;
  /** Keys whose last connections were on instances that died: this instance arms them. */
  onOrphaned(listener: (keyId: string) => void): void;
  /** This instance's own count of the key. */
  local(keyId: string): number;
  /**
   * This instance is stopping: the closes of its connections from now on are not counted down,
   * and other instances are told it is gone, so one of them sweeps its counts and arms the keys
   * left with none (this instance will not be there to run their cancels).
   */
  halt(): Promise<void>;
}

/** This process's connections: the behaviour of a single instance. */
export class LocalCodCounter implements CodCounter {
  protected readonly live = new Map<string, number>();

  connected(keyId: string): Promise<void> {
    this.up(keyId);
    return Promise.resolve();
  }

  disconnected(keyId: string): Promise<{ total: number; arm: boolean }> {
    const total = this.down(keyId);
    return Promise.resolve({ total, arm: total === 0 });
  }

  total(keyId: string): Promise<number> {
    return Promise.resolve(this.local(keyId));
  }

  claimAtBoot(_keyId: string, _graceMs: number): Promise<boolean> {
    return Promise.resolve(true);
  }

  onOrphaned(_listener: (keyId: string) => void): void {
    // Alone, no other instance's connections can be left behind.
  }

  local(keyId: string): number {
    return this.live.get(keyId) ?? 0;
  }

  halt(): Promise<void> {
    // Alone, a restart arms every enabled key at boot instead.
    return Promise.resolve();
  }

  protected up(keyId: string): number {
    const n = (this.live.get(keyId) ?? 0) + 1;
    this.live.set(keyId, n);
    return n;
  }

  protected down(keyId: string): number {
    const n = (this.live.get(keyId) ?? 1) - 1;
    if (n > 0) this.live.set(keyId, n);
    else this.live.delete(keyId);
    return Math.max(0, n);
  }
}
