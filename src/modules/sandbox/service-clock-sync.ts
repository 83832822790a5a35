import { Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { AdjustableClock, Clock } from '../../common/clock/clock.js';
import { ConfigService } from '../../config/config.service.js';
import { ClusterSignals } from '../redis/cluster-signals.js';
import { RedisConnection } from '../redis/redis-connection.js';

/** Where the service clock's offset is kept in Redis, for instances that start later. */
export const CLOCK_OFFSET_KEY = 'sandbox:clock-offset';
/** Sets the key to ARGV[1] only if that is further ahead: offsets only grow. */
const RAISE = `
local cur = tonumber(redis.call('GET', KEYS[1]) or '0')
if tonumber(ARGV[1]) > cur then redis.call('SET', KEYS[1], ARGV[1]) return 1 end
return 0`;
/** How long the boot waits for the shared offset (a frozen Redis must not hold it). */
const READ_MS = 1_000;
/**
 * How often (real ms) an instance reads the shared offset again: a move whose signal it missed
 * (Redis away when it was made, or when it was published) reaches it within this long once Redis
 * answers. One GET per instance per period.
 */
export const CLOCK_REREAD_MS = 5_000;

/**
 * The service clock's moves (POST /sandbox/clock without a world key, SANDBOX_CLOCK_CONTROL on)
 * on every instance. In cluster mode the request runs on the writer of the caller's world (the
 * route is world-bound), which moves its clock and says how far ahead it runs now: a signal
 * (ClusterSignals, Redis pub/sub) every instance follows at once, and a Redis key an instance
 * starting later, or one that missed the signal, reads at its start. Offsets only grow, so an
 * instance follows the furthest it hears of. Alone (no Redis) this is the local clock's move.
 *
 * A move made while Redis is away reaches nobody at once (the signal is lost, the key cannot be
 * written). So every time its connection becomes ready again each instance writes its own offset
 * to the key (if further ahead) and reads the key back, and every {@link CLOCK_REREAD_MS} it reads
 * the key again: the instance that moved pushes its move when Redis returns, and the others pick
 * it up within one period (also after a Redis restarted empty: every instance writes it back).
 */
@Injectable()
export class ServiceClockSync implements OnModuleInit, OnApplicationShutdown {
  private readonly log = new Logger('ServiceClock');
  private timer: NodeJS.Timeout | null = null;
  private readonly onReady = (): void => {
    const clock = this.adjustable;
    if (clock !== null) void this.share(clock);
  };

  constructor(
    private readonly clock: Clock,
    private readonly config: ConfigService,
    private readonly signals: ClusterSignals,
    private readonly redis: RedisConnection,
  ) {}

  private get adjustable(): AdjustableClock | null {
    return this.config.values.sandboxClockControl && this.clock instanceof AdjustableClock
      ? this.clock
      : null;
  }

  async onModuleInit(): Promise<void> {
    const clock = this.adjustable;
    if (clock === null) return;
    this.signals.on('clock.advanced', (s) => this.follow(clock, s.offsetMs));
    const client = this.redis.client;
    if (client === null) return;
    client.on('ready', this.onReady);
    this.timer = setInterval(() => void this.read(clock), CLOCK_REREAD_MS);
    this.timer.unref();
    if (client.status !== 'ready') return;
    let timer: NodeJS.Timeout | undefined;
    const shared = await Promise.race([
      client.get(CLOCK_OFFSET_KEY).catch(() => null),
      new Promise<null>((r) => (timer = setTimeout(() => r(null), READ_MS))),
    ]);
    clearTimeout(timer);
    if (shared !== null) this.follow(clock, Number(shared));
  }

  onApplicationShutdown(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    this.redis.client?.off('ready', this.onReady);
  }

  /** The local clock was just moved: every other instance follows it. */
  advanced(): void {
    const clock = this.adjustable;
    if (clock === null) return;
    const offsetMs = clock.offset;
    this.signals.publish({ kind: 'clock.advanced', offsetMs });
    const client = this.redis.client;
    if (client === null || client.status !== 'ready') return;
    client.eval(RAISE, 1, CLOCK_OFFSET_KEY, String(offsetMs)).catch((err: unknown) => {
      this.log.warn(`could not share the clock offset: ${String(err)}`);
    });
  }

  /** Redis is (back) up: the key gets this instance's offset if further ahead, then is read. */
  private async share(clock: AdjustableClock): Promise<void> {
    const client = this.redis.client;
    if (client === null || client.status !== 'ready') return;
    try {
      await client.eval(RAISE, 1, CLOCK_OFFSET_KEY, String(clock.offset));
    } catch (err) {
      this.log.warn(`could not share the clock offset: ${String(err)}`);
      return;
    }
    await this.read(clock);
  }

  /** Follows the offset the key holds, if Redis answers (else nothing: the next read will). */
  private async read(clock: AdjustableClock): Promise<void> {
    const client = this.redis.client;
    if (client === null || client.status !== 'ready') return;
    const shared = await client.get(CLOCK_OFFSET_KEY).catch(() => null);
    if (shared !== null) this.follow(clock, Number(shared));
  }

  private follow(clock: AdjustableClock, offsetMs: number): void {
    if (clock.follow(offsetMs)) {
      this.log.log(`the service clock follows another instance: ${offsetMs / 1000} s ahead`);
    }
  }
}
