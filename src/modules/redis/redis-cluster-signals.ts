import type { OnApplicationShutdown } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { prefixedChannel } from './redis-key-prefix.js';
import { ClusterSignals, type ClusterSignal, type SignalKind } from './cluster-signals.js';

/** The pub/sub channel every instance of one deployment listens on (after REDIS_KEY_PREFIX). */
export const SIGNAL_CHANNEL = 'svc:signals';
/**
 * With Redis, state cached from the database is read again at least this often (real time): a
 * signal missed while Redis was away (pub/sub keeps nothing) keeps a revoked key or a changed
 * webhook endpoint alive at most this long on another instance.
 */
export const CLUSTER_CACHE_TTL_MS = 5_000;
/** At most one warning per outage window about signals that could not be sent. */
const WARN_EVERY_MS = 30_000;

const KINDS: ReadonlySet<SignalKind> = new Set<SignalKind>([
  'key.revoked',
  'key.rotated',
  'key.changed',
  'webhook-endpoint.changed',
  'cod.settings',
  'cod.armed',
  'cod.disarmed',
  'clock.advanced',
  'world-clock.advanced',
]);

/**
 * Signals over Redis pub/sub (REDIS_URL): published on {@link SIGNAL_CHANNEL} with the sender's
 * instance id; every other instance applies what it receives, the sender already applied it when
 * it published. Fail-open: while Redis is away a publish still applies here, and a warning says
 * (at most once per {@link WARN_EVERY_MS}) that the others did not hear it; the cache TTL bounds
 * what they keep.
 */
export class RedisClusterSignals extends ClusterSignals implements OnApplicationShutdown {
  readonly cacheTtlMs = CLUSTER_CACHE_TTL_MS;
  /** A connection of its own: a subscribed ioredis client takes no other command. */
  private readonly subscriber: Redis;
  private warnedAt = -Infinity;
  private readonly channel: string;

  constructor(private readonly client: Redis) {
    super();
    this.channel = prefixedChannel(client, SIGNAL_CHANNEL);
    // ioredis's own resubscription after a reconnect would fail unhandled here (no offline
    // queue); the `ready` handler below subscribes instead.
    this.subscriber = client.duplicate({ autoResubscribe: false });
    // Subscribed at every (re)connection: the client queues nothing while offline, so the first
    // SUBSCRIBE waits for `ready`, and a new server after an outage knows no subscription.
    this.subscriber.on('ready', () => {
      this.subscriber.subscribe(this.channel).catch((err: unknown) => this.warn(err));
    });
    this.subscriber.on('error', () => undefined); // RedisConnection already reports outages
    this.subscriber.on('message', (_channel: string, text: string) => this.receive(text));
  }

  /** Subscribed now (tests wait for it before publishing from another instance). */
  get listening(): boolean {
    return this.subscriber.status === 'ready';
  }

  publish(signal: ClusterSignal): void {
    this.apply(signal);
    const text = JSON.stringify({ from: this.instanceId, signal });
    if (this.client.status !== 'ready') {
      this.warn(new Error(`connection ${this.client.status}`));
      return;
    }
    this.client.publish(this.channel, text).catch((err: unknown) => this.warn(err));
  }

  onApplicationShutdown(): void {
    this.subscriber.disconnect();
  }

  private receive(text: string): void {
    let parsed: { from?: unknown; signal?: ClusterSignal };
    try {
      parsed = JSON.parse(text) as typeof parsed;
    } catch {
      return;
    }
    if (parsed.from === this.instanceId) return; // applied when published
    const signal = parsed.signal;
    if (signal === undefined || signal === null || !KINDS.has(signal.kind)) return;
    this.apply(signal);
  }

  private warn(err: unknown): void {
    const now = Date.now();
    if (now - this.warnedAt < WARN_EVERY_MS) return;
    this.warnedAt = now;
    this.log.warn(
      `a signal was applied on this instance only (Redis: ${err instanceof Error ? err.message : String(err)}); other instances read it again within ${CLUSTER_CACHE_TTL_MS} ms`,
    );
  }
}
