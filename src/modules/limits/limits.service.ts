import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RouteMeta } from '../../common/api/route-meta.js';
import { Clock } from '../../common/clock/clock.js';
import { DomainError } from '../../common/errors/domain-error.js';
import type { Credential } from '../../common/http/request-context.js';
import { ConfigService } from '../../config/config.service.js';
import { WorldClocks } from '../worlds/world-clocks.service.js';
import {
  LIMIT_STORE,
  MemoryLimitStore,
  type Charge,
  type LimitStore,
  type TakeResult,
} from './limit-store.js';
import {
  dayWindow,
  EXPORT_ROW_QUOTAS,
  IP_CEILINGS,
  IP_WINDOW_SECONDS,
  ipCategoryOf,
  minuteWindow,
  monthWindow,
  TIER_PER_MINUTE,
  TIER_QUOTAS,
} from './limit-tables.js';

/** How long a shared store may take before the check fails open (or falls back). */
export const STORE_TIMEOUT_MS = 50;
/** Legs one batch may hold (POST /orders/batch's schema: 1..20). */
const MAX_BATCH_LEGS = 20;
const WARN_EVERY_MS = 10_000;

type Scope = 'key' | 'route' | 'day' | 'month';

/** A per-IP charge, with the path category it counts against. */
type IpCharge = Charge & { category: keyof typeof IP_CEILINGS };

/** A per-leg request's legs, charged per IP together with the key's limits. */
export interface LegCharge {
  req: FastifyRequest;
  charge: IpCharge;
}

/**
 * Every limit of SPEC.md: per-IP ceilings before authentication, per-key tier throughput,
 * per-route limits, daily and monthly quotas, and the atomic batch-leg charge. The store is the
 * only state; a store failure lets per-IP ceilings and quotas through (logged, rate-limited)
 * while the per-key tier ceiling falls back to a local store.
 */
@Injectable()
export class LimitsService {
  private readonly log = new Logger('Limits');
  private readonly fallback = new MemoryLimitStore();
  private lastWarn = 0;
  readonly enabled: boolean;

  constructor(
    @Inject(LIMIT_STORE) private readonly store: LimitStore,
    private readonly clock: Clock,
    private readonly config: ConfigService,
    // Absent only where a LimitsService is built by hand (benches, unit specs): the service clock.
    @Optional() private readonly clocks?: WorldClocks,
  ) {
    this.enabled = config.values.rateLimitsEnabled;
  }

  /**
   * The credential's time: its world's clock (an ephemeral world's own, see WorldClocks), and how
   * far that runs ahead of the service clock. A credential's windows start and end on its world's
   * clock; the store keeps every counter on the service clock (`shift` taken off), so a world run
   * ahead neither expires another world's counters nor keeps its own alive.
   */
  private timeOf(c: Credential): { now: number; shift: number } {
    const now = (this.clocks?.for(c.world) ?? this.clock).now();
    return { now, shift: now - this.clock.now() };
  }

  /** Requests of a per-leg route whose legs were charged or refused (see {@link legCharge}). */
  private readonly legsCharged = new WeakSet<FastifyRequest>();

  /**
   * Per-IP ceiling for the request's path category (onRequest, before authentication). A per-leg
   * route (POST /orders/batch) is charged once its body is parsed: see {@link legCharge}.
   */
  async checkIp(req: FastifyRequest, meta: RouteMeta | undefined): Promise<void> {
    if (!this.enabled || meta?.ipCharge === 'legs') return;
    await this.chargeIp(req.ip, categoryOf(req), 1);
  }

  /**
   * The per-IP charge of a per-leg request's legs (1..20; a body that holds no list counts as 1),
   * computed once: first held against the bucket before authentication ({@link gateLegs}), then
   * taken in one all-or-nothing step with the key's ceiling, its route limit and its quotas
   * ({@link checkCredential}). A batch the legs do not fit charges nothing anywhere; one refused
   * by a key or route limit counts one per-IP unit, as any request does, and not its legs; one
   * that passes is charged everywhere. A body the schema then refuses has been charged too, so
   * bad batches meet the ceiling like any request.
   */
  legCharge(req: FastifyRequest): LegCharge | null {
    if (!this.enabled) return null;
    const body = req.body as { orders?: unknown } | undefined;
    const legs = Array.isArray(body?.orders)
      ? Math.min(MAX_BATCH_LEGS, Math.max(1, body.orders.length))
      : 1;
    return { req, charge: this.ipCharge(req.ip, categoryOf(req), legs, this.clock.now()) };
  }

  /**
   * POST /orders/batch, once its body is parsed and before authentication, as per-IP ceilings
   * are: refused when the IP's bucket cannot take its legs, charging nothing (a refusal by a
   * limit has no other effect). Nothing is charged here either way.
   */
  async gateLegs(legs: LegCharge): Promise<void> {
    const now = this.clock.now();
    const used = await this.countOr(legs.charge.bucket, now, legs.charge.tag);
    if (used !== null && used + legs.charge.units > legs.charge.limit) {
      this.legsCharged.add(legs.req); // refused by the limit itself: nothing to count afterwards
      throw this.ipLimited(legs.charge, now);
    }
  }

  /**
   * After the response: a per-leg request that never reached its leg charge (a body that is not
   * JSON, a refused credential, a key, route or quota limit) still counts once, like any other
   * request.
   */
  async settleLegs(req: FastifyRequest, meta: RouteMeta | undefined): Promise<void> {
    if (!this.enabled || meta?.ipCharge !== 'legs' || this.legsCharged.has(req)) return;
    // The answer is out already: a full bucket refuses nothing more here.
    await this.chargeIp(req.ip, categoryOf(req), 1).catch(() => undefined);
  }

  /**
   * The per-IP ceiling for a WebSocket handshake (GET /api/v1/ws, category general): it is an
   * HTTP request like any other, which the upgrade path takes before Fastify's hooks see it.
   * `ip` is the client address as the HTTP routes see it (TRUSTED_PROXIES honoured).
   */
  async checkHandshake(ip: string): Promise<void> {
    if (!this.enabled) return;
    await this.chargeIp(ip, 'general', 1);
  }

  private ipCharge(
    ip: string,
    category: keyof typeof IP_CEILINGS,
    units: number,
    now: number,
  ): IpCharge {
    const [start, end] = minuteWindow(now);
    return {
      bucket: `ip:${category}:${ip}:${start}`,
      units,
      limit: IP_CEILINGS[category],
      windowEnd: end,
      tag: `ip:${ip}`,
      category,
    };
  }

  private ipLimited(charge: IpCharge, now: number): DomainError {
    return this.limited('ip', charge.limit, charge.windowEnd, now, {
      category: charge.category,
      window_seconds: IP_WINDOW_SECONDS,
      units: charge.units,
    });
  }

  private async chargeIp(
    ip: string,
    category: keyof typeof IP_CEILINGS,
    units: number,
  ): Promise<void> {
    const now = this.clock.now();
    const charge = this.ipCharge(ip, category, units, now);
    const result = await this.safeTake([charge], now);
    if (result === null) return; // store unavailable: per-IP ceilings fail open
    if (!result.ok) throw this.ipLimited(charge, now);
  }

  /**
   * Per-key (or per-user for sessions) tier ceiling, the route's limit and, while metering is on,
   * the key's quotas: charged together, all or nothing, after authentication and scope. A
   * per-leg request's per-IP charge of its legs ({@link legCharge}) comes first in the same step.
   */
  async checkCredential(
    c: Credential,
    meta: RouteMeta,
    routeId: string,
    reply: FastifyReply,
    legs: LegCharge | null = null,
  ): Promise<void> {
    if (!this.enabled) return;
    const { now, shift } = this.timeOf(c);
    const who = c.keyId ?? `user:${c.userId}`;
    const [mStart, mEnd] = minuteWindow(now);
    const perMinute = TIER_PER_MINUTE[c.tier];
    // Every counter of a credential belongs to its user (one Redis hash tag), per-user route
    // limits included, so the key's charges are one step on one node.
    const tag = c.userId;
    const charges: Charge[] = [
      { bucket: `key:${who}:${mStart}`, units: 1, limit: perMinute, windowEnd: mEnd - shift, tag },
    ];
    const scopes: Scope[] = ['key'];
    if (meta.routeLimitPerMinute !== undefined) {
      // A per-user limit counts per world: the paper world's attempts never spend the live one's,
      // nor an ephemeral world's (which runs on its own clock) the paper world's.
      const counted = meta.routeLimitPer === 'user' ? `user:${c.world}:${c.userId}` : who;
      charges.push({
        bucket: `route:${routeId}:${counted}:${mStart}`,
        units: 1,
        limit: meta.routeLimitPerMinute,
        windowEnd: mEnd - shift,
        tag,
      });
      scopes.push('route');
    }
    const metered = this.config.values.usageMeteringEnabled && c.keyId !== null;
    const quota = TIER_QUOTAS[c.tier];
    const [dStart, dEnd] = dayWindow(now);
    const [moStart, moEnd] = monthWindow(now);
    const withQuotas = metered
      ? [
          ...charges,
          {
            bucket: `quota:day:${c.keyId}:${dStart}`,
            units: 1,
            limit: quota.day,
            windowEnd: dEnd - shift,
            tag,
          },
          {
            bucket: `quota:month:${c.keyId}:${moStart}`,
            units: 1,
            limit: quota.month,
            windowEnd: moEnd - shift,
            tag,
          },
        ]
      : charges;

    // The legs' per-IP charge, if any, first: `base` is where the key's own charge sits.
    let taken = legs === null ? withQuotas : [legs.charge, ...withQuotas];
    let base = taken.length - withQuotas.length;
    // The store's time is the service clock's (the legs' per-IP charge is on it already).
    const storeNow = now - shift;
    let result = await this.safeTake(taken, storeNow);
    let quotasCounted = metered;
    /** Reads a counter back from the store that took the charges. */
    let countOf = (charge: Charge): Promise<number | null> =>
      this.countOr(charge.bucket, storeNow, charge.tag);
    if (result === null) {
      // Store unavailable: per-IP ceilings and quotas fail open; the tier and route ceilings
      // still hold, locally.
      taken = charges;
      base = 0;
      result = this.fallback.take(charges, storeNow);
      quotasCounted = false;
      countOf = (charge) => Promise.resolve(this.fallback.count(charge.bucket, storeNow));
    }
    // Legs that fit, or did not (nothing is charged then), need no more; a key or route refusal
    // leaves them to count once after the answer (settleLegs).
    const keyRefused = !result.ok && result.index >= base;
    if (legs !== null && !keyRefused) this.legsCharged.add(legs.req);
    reply
      .header('X-RateLimit-Limit', String(perMinute))
      .header('X-RateLimit-Reset', String(Math.ceil(mEnd / 1000)));
    if (!result.ok) {
      // A refusal charged nothing: what is left is read back, so every limit header is present
      // on a 429 too (the key's remaining minute, and the quotas while they are metered).
      const refusedAt = result.index;
      const refusedCount = result.count;
      const left = async (i: number): Promise<number> =>
        Math.max(
          0,
          taken[i].limit - (i === refusedAt ? refusedCount : ((await countOf(taken[i])) ?? 0)),
        );
      reply.header('X-RateLimit-Remaining', String(await left(base)));
      if (quotasCounted) {
        const n = taken.length;
        reply
          .header('X-Quota-Daily-Limit', String(quota.day))
          .header('X-Quota-Daily-Remaining', String(await left(n - 2)))
          .header('X-Quota-Monthly-Limit', String(quota.month))
          .header('X-Quota-Monthly-Remaining', String(await left(n - 1)));
      }
      if (refusedAt < base) throw this.ipLimited(legs!.charge, storeNow);
      const scope = [...scopes, 'day', 'month'][refusedAt - base] as Scope;
      if (scope === 'day' || scope === 'month') {
        const end = scope === 'day' ? dEnd : moEnd;
        throw new DomainError(
          'QUOTA_EXCEEDED',
          `The ${scope === 'day' ? 'daily' : 'monthly'} quota of the ${c.tier} tier (${scope === 'day' ? quota.day : quota.month} requests) is used up`,
          {
            period: scope,
            limit: scope === 'day' ? quota.day : quota.month,
            tier: c.tier,
            resets_at: new Date(end).toISOString(),
          },
          { 'Retry-After': String(retryAfter(end, now)) },
        );
      }
      throw this.limited(scope, taken[refusedAt].limit, mEnd, now, {
        tier: c.tier,
        window_seconds: 60,
      });
    }
    reply.header('X-RateLimit-Remaining', String(Math.max(0, perMinute - result.counts[base])));
    if (quotasCounted) {
      const n = result.counts.length;
      reply
        .header('X-Quota-Daily-Limit', String(quota.day))
        .header('X-Quota-Daily-Remaining', String(Math.max(0, quota.day - result.counts[n - 2])))
        .header('X-Quota-Monthly-Limit', String(quota.month))
        .header(
          'X-Quota-Monthly-Remaining',
          String(Math.max(0, quota.month - result.counts[n - 1])),
        );
    }
  }

  /**
   * Charges `rows` exported rows to the key's monthly export-row quota (metering on, API keys
   * only), all or nothing: past the quota it is 429 QUOTA_EXCEEDED (details.period "month",
   * quota "export_rows") and nothing is charged. A store that does not answer lets it through,
   * as the request quotas do.
   */
  async chargeExportRows(c: Credential, rows: number): Promise<void> {
    if (!this.config.values.usageMeteringEnabled || c.keyId === null || rows <= 0) return;
    const now = this.clock.now();
    const [moStart, moEnd] = monthWindow(now);
    const limit = EXPORT_ROW_QUOTAS[c.tier];
    const charge: Charge = {
      bucket: exportRowsBucket(c.keyId, moStart),
      units: rows,
      limit,
      windowEnd: moEnd,
      tag: c.userId,
    };
    const result = await this.safeTake([charge], now);
    if (result === null || result.ok) return;
    throw new DomainError(
      'QUOTA_EXCEEDED',
      `The export would hold ${rows} rows; the ${c.tier} tier may export ${limit} rows a month and ${Math.max(0, limit - result.count)} are left`,
      {
        period: 'month',
        quota: 'export_rows',
        limit,
        used: result.count,
        requested: rows,
        tier: c.tier,
        resets_at: new Date(moEnd).toISOString(),
      },
      { 'Retry-After': String(retryAfter(moEnd, now)) },
    );
  }

  /** Usage of a key in the current windows (GET /usage). */
  async usage(c: Credential): Promise<UsageSnapshot> {
    const { now, shift } = this.timeOf(c);
    const who = c.keyId ?? `user:${c.userId}`;
    const [mStart, mEnd] = minuteWindow(now);
    const [dStart, dEnd] = dayWindow(now);
    const [moStart, moEnd] = monthWindow(now);
    const count = (bucket: string): Promise<number | null> =>
      this.countOr(bucket, now - shift, c.userId);
    const quota = TIER_QUOTAS[c.tier];
    const metered = this.config.values.usageMeteringEnabled && c.keyId !== null;
    const minute = await count(`key:${who}:${mStart}`);
    const day = metered ? await count(`quota:day:${c.keyId}:${dStart}`) : null;
    const month = metered ? await count(`quota:month:${c.keyId}:${moStart}`) : null;
    const exportRows =
      this.config.values.usageMeteringEnabled && c.keyId !== null
        ? await count(exportRowsBucket(c.keyId, moStart))
        : null;
    return {
      key_id: c.keyId,
      tier: c.tier,
      metering_enabled: this.config.values.usageMeteringEnabled,
      per_minute: {
        limit: TIER_PER_MINUTE[c.tier],
        used: minute,
        resets_at: new Date(mEnd).toISOString(),
      },
      daily: { limit: quota.day, used: day, resets_at: new Date(dEnd).toISOString() },
      monthly: { limit: quota.month, used: month, resets_at: new Date(moEnd).toISOString() },
      exports: { rows_month: exportRows, rows_month_limit: EXPORT_ROW_QUOTAS[c.tier] },
    };
  }

  private limited(
    scope: 'ip' | 'key' | 'route',
    limit: number,
    windowEnd: number,
    now: number,
    extra: Record<string, unknown>,
  ): DomainError {
    return rateLimited(scope, limit, retryAfter(windowEnd, now), extra);
  }

  /** A counter's value, or null when the store does not answer (the headers then say 0 used). */
  private async countOr(bucket: string, now: number, tag?: string): Promise<number | null> {
    try {
      return await this.withTimeout(this.store.count(bucket, now, tag));
    } catch {
      return null;
    }
  }

  /** The store's answer, or null when it threw or did not answer in time. */
  private async safeTake(charges: Charge[], now: number): Promise<TakeResult | null> {
    try {
      return await this.withTimeout(this.store.take(charges, now));
    } catch (err) {
      if (now - this.lastWarn >= WARN_EVERY_MS) {
        this.lastWarn = now;
        this.log.warn(
          `limit store unavailable, failing open: ${err instanceof Error ? err.message : String(err)}`,
        );
      }
      return null;
    }
  }

  /**
   * The store's answer, or an error when it has not answered after STORE_TIMEOUT_MS. When the
   * timer fires, the answer may be waiting unread on the socket: Node runs expired timers before
   * it polls for I/O, so after the event loop was busy for longer than the timeout (a burst of
   * requests on a loaded machine) every pending charge's timer would fire before the store's
   * answers were read, and the ceilings would fail open exactly under a burst. One poll of I/O
   * (setImmediate runs after it) reads them first; only a store still silent then is unavailable.
   */
  private withTimeout<T>(value: T | Promise<T>): T | Promise<T> {
    if (!(value instanceof Promise)) return value;
    let timer: NodeJS.Timeout | undefined;
    let immediate: NodeJS.Immediate | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        immediate = setImmediate(() => reject(new Error(`no answer in ${STORE_TIMEOUT_MS} ms`)));
      }, STORE_TIMEOUT_MS);
    });
    return Promise.race([value, timeout]).finally(() => {
      clearTimeout(timer);
      if (immediate !== undefined) clearImmediate(immediate);
    });
  }
}

/**
 * The per-IP category of a request: from the route that matched (its pattern, as the router
 * decoded the path), else from the percent-decoded path, so `/api/v1/%61uth/login` counts as
 * auth like `/api/v1/auth/login` does.
 */
export function categoryOf(
  req: Pick<FastifyRequest, 'url' | 'routeOptions'>,
): ReturnType<typeof ipCategoryOf> {
  const route = req.routeOptions?.url;
  if (route !== undefined) return ipCategoryOf(route);
  const path = req.url.split('?')[0];
  let decoded = path;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    // malformed escapes: categorise the path as sent
  }
  return ipCategoryOf(decoded.replace(/\/{2,}/g, '/'));
}

function exportRowsBucket(keyId: string, monthStart: number): string {
  return `quota:export-rows:${keyId}:${monthStart}`;
}

/** Whole seconds until the window ends, never earlier than the moment a retry can succeed. */
export function retryAfter(windowEnd: number, now: number): number {
  return Math.max(1, Math.ceil((windowEnd - now) / 1000));
}

export interface UsageSnapshot {
  key_id: string | null;
  tier: string;
  metering_enabled: boolean;
  per_minute: { limit: number; used: number | null; resets_at: string };
  daily: { limit: number; used: number | null; resets_at: string };
  monthly: { limit: number; used: number | null; resets_at: string };
  exports: { rows_month: number | null; rows_month_limit: number };
}

/**
 * The 429 RATE_LIMITED answer, as every limit gives it (and a sandbox RATE_LIMIT scenario): the
 * scope and limit refused, and when to retry (details and Retry-After).
 */
export function rateLimited(
  scope: 'ip' | 'key' | 'route',
  limit: number,
  seconds: number,
  extra: Record<string, unknown>,
): DomainError {
  return new DomainError(
    'RATE_LIMITED',
    `Rate limit exceeded (${scope}: ${limit} per ${String(extra.window_seconds ?? 60)} s); retry after ${seconds} s`,
    { limit_scope: scope, limit, retry_after_seconds: seconds, ...extra },
    { 'Retry-After': String(seconds) },
  );
}
