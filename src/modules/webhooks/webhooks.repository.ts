import type { SqlConnection, SqlStatement } from '../../common/sql/sql-connection.js';

export type EndpointStatus = 'ACTIVE' | 'SUSPENDED' | 'DISABLED';
export type DeliveryStatus = 'PENDING' | 'HELD' | 'SUCCEEDED' | 'DEAD_LETTERED' | 'CANCELLED';

export interface EndpointRow {
  id: string;
  user_id: string;
  environment: 'live' | 'test';
  /** The ephemeral world whose events it receives (created with that world's key); else null. */
  world_id: string | null;
  url: string;
  description: string;
  events: string;
  status: EndpointStatus;
  secret_enc: string;
  secret_version: number;
  prev_secret_enc: string | null;
  prev_secret_until: string | null;
  streak_baseline_at: string | null;
  last_success_at: string | null;
  last_failure_at: string | null;
  last_error: string | null;
  suspended_at: string | null;
  suspension_reason: string | null;
  created_at: string;
  updated_at: string;
}

/** SQL: counts the attempt that a delivery's mark (attempt_started_at) says was never recorded. */
const COUNT_UNRECORDED =
  'attempts = attempts + CASE WHEN attempt_started_at IS NULL THEN 0 ELSE 1 END';

/** last_error of a delivery whose last allowed attempt a crash or shutdown cut short. */
export const CUT_SHORT_LAST = 'the last attempt was cut short by a restart';

export interface DeliveryRow {
  id: string;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  status: DeliveryStatus;
  attempts: number;
  next_attempt_at: string | null;
  is_replay: number;
  replay_of: string | null;
  created_at: string;
  last_attempt_at: string | null;
  completed_at: string | null;
  response_status: number | null;
  last_error: string | null;
  /** When the attempt in flight began; still set after a crash or shutdown cut it short. */
  attempt_started_at: string | null;
}

export interface EventRow {
  id: string;
  environment: 'live' | 'test';
  type: string;
  payload: string;
  created_at: string;
}

export interface WindowCounts {
  succeeded: number;
  deadLettered: number;
}

/** All webhook SQL, as prepared statements on the platform database (synchronous, cheap). */
export class WebhooksRepository {
  private readonly s: Record<string, SqlStatement>;

  constructor(readonly db: SqlConnection) {
    const p = (sql: string) => db.prepare(sql);
    this.s = {
      insertEndpoint:
        p(`INSERT INTO webhook_endpoints (id, user_id, environment, world_id, url, description, events, status,
        secret_enc, secret_version, prev_secret_enc, prev_secret_until, streak_baseline_at, last_success_at,
        last_failure_at, last_error, suspended_at, suspension_reason, created_at, updated_at)
        VALUES (@id, @user_id, @environment, @world_id, @url, @description, @events, @status, @secret_enc, @secret_version,
        @prev_secret_enc, @prev_secret_until, @streak_baseline_at, @last_success_at, @last_failure_at, @last_error,
        @suspended_at, @suspension_reason, @created_at, @updated_at)`),
      saveEndpoint:
        p(`UPDATE webhook_endpoints SET url = @url, description = @description, events = @events,
        status = @status, secret_enc = @secret_enc, secret_version = @secret_version, prev_secret_enc = @prev_secret_enc,
        prev_secret_until = @prev_secret_until, streak_baseline_at = @streak_baseline_at,
        last_success_at = @last_success_at, last_failure_at = @last_failure_at, last_error = @last_error,
        suspended_at = @suspended_at, suspension_reason = @suspension_reason, updated_at = @updated_at WHERE id = @id`),
      endpoint: p(`SELECT * FROM webhook_endpoints WHERE id = ?`),
      endpointsOfUser: p(
        `SELECT * FROM webhook_endpoints WHERE user_id = ? AND environment = ? AND world_id IS NOT DISTINCT FROM ? AND id > ? ORDER BY id LIMIT ?`,
      ),
      liveEndpoints: p(`SELECT * FROM webhook_endpoints WHERE status != 'DISABLED'`),
      disableWorld: p(
        `UPDATE webhook_endpoints SET status = 'DISABLED', updated_at = ? WHERE world_id = ? AND status != 'DISABLED'`,
      ),
      countCapped: p(
        `SELECT COUNT(*) AS n FROM webhook_endpoints WHERE user_id = ? AND status IN ('ACTIVE','SUSPENDED')`,
      ),
      insertEvent: p(
        `INSERT INTO webhook_events (id, environment, type, payload, created_at) VALUES (?, ?, ?, ?, ?)`,
      ),
      event: p(`SELECT * FROM webhook_events WHERE id = ?`),
      insertDelivery:
        p(`INSERT INTO webhook_deliveries (id, endpoint_id, event_id, event_type, status, attempts,
        next_attempt_at, is_replay, replay_of, created_at) VALUES (?, ?, ?, ?, ?, 0, ?, ?, ?, ?)`),
      delivery: p(`SELECT * FROM webhook_deliveries WHERE id = ?`),
      deliveryOfEvent: p(
        `SELECT * FROM webhook_deliveries WHERE endpoint_id = ? AND event_id = ? AND replay_of IS NULL`,
      ),
      due: p(`SELECT * FROM webhook_deliveries WHERE endpoint_id = ? AND status = 'PENDING' AND next_attempt_at <= ?
        ORDER BY next_attempt_at, id LIMIT ?`),
      // A mark still set here is an attempt whose outcome was never recorded: counted first.
      startAttempt: p(
        `UPDATE webhook_deliveries SET ${COUNT_UNRECORDED}, attempt_started_at = ?
        WHERE id = ? AND status = 'PENDING'`,
      ),
      exhaust: p(
        `UPDATE webhook_deliveries SET ${COUNT_UNRECORDED}, attempt_started_at = NULL, status = 'DEAD_LETTERED', completed_at = ?, next_attempt_at = NULL,
        response_status = NULL, last_error = ? WHERE id = ? AND status = 'PENDING'`,
      ),
      // An attempt whose delivery was held or cancelled while it ran still happened.
      countAttempt: p(
        `UPDATE webhook_deliveries SET attempts = attempts + 1, last_attempt_at = ?, attempt_started_at = NULL
        WHERE id = ? AND attempt_started_at IS NOT NULL`,
      ),
      // At boot nothing is in flight: a mark still set is an attempt a crash or shutdown cut
      // short. The receiver may have got it, so it counts; one that was the last allowed ends
      // its delivery (it is not sent again past the schedule).
      exhaustCutShort: p(
        `UPDATE webhook_deliveries SET status = 'DEAD_LETTERED', completed_at = ?, next_attempt_at = NULL,
        response_status = NULL, last_error = '${CUT_SHORT_LAST}' WHERE attempt_started_at IS NOT NULL
        AND status = 'PENDING' AND attempts + 1 >= ?`,
      ),
      countCutShort: p(
        `UPDATE webhook_deliveries SET attempts = attempts + 1, last_attempt_at = attempt_started_at,
        attempt_started_at = NULL WHERE attempt_started_at IS NOT NULL`,
      ),
      attempted:
        p(`UPDATE webhook_deliveries SET status = ?, attempts = ?, next_attempt_at = ?, last_attempt_at = ?,
        completed_at = ?, response_status = ?, last_error = ?, attempt_started_at = NULL
        WHERE id = ? AND status = 'PENDING'`),
      moveStatus:
        p(`UPDATE webhook_deliveries SET status = ?, next_attempt_at = COALESCE(?, next_attempt_at)
        WHERE endpoint_id = ? AND status = ?`),
      deliveriesOf: p(
        `SELECT * FROM webhook_deliveries WHERE endpoint_id = ? AND id < ? ORDER BY id DESC LIMIT ?`,
      ),
      deliveriesOfByStatus:
        p(`SELECT * FROM webhook_deliveries WHERE endpoint_id = ? AND status = ? AND id < ?
        ORDER BY id DESC LIMIT ?`),
      windowCounts:
        p(`SELECT status, COUNT(*) AS n FROM webhook_deliveries WHERE endpoint_id = ? AND is_replay = FALSE
        AND status IN ('SUCCEEDED','DEAD_LETTERED') AND completed_at >= ? GROUP BY status`),
      streak:
        p(`SELECT COUNT(*) AS n FROM webhook_deliveries WHERE endpoint_id = ? AND is_replay = FALSE
        AND status = 'DEAD_LETTERED' AND completed_at > ?`),
      dlq: p(
        `SELECT COUNT(*) AS n FROM webhook_deliveries WHERE endpoint_id = ? AND status = 'DEAD_LETTERED'`,
      ),
      replays: p(
        `SELECT COUNT(*) AS n FROM webhook_deliveries WHERE endpoint_id = ? AND is_replay = TRUE AND created_at >= ?`,
      ),
    };
  }

  insertEndpoint(e: EndpointRow): void {
    this.s.insertEndpoint.run(e);
  }

  saveEndpoint(e: EndpointRow): void {
    this.s.saveEndpoint.run(e);
  }

  endpoint(id: string): EndpointRow | undefined {
    return this.s.endpoint.get(id) as EndpointRow | undefined;
  }

  endpointsOfUser(
    userId: string,
    environment: string,
    worldId: string | null,
    afterId: string,
    limit: number,
  ): EndpointRow[] {
    return this.s.endpointsOfUser.all(
      userId,
      environment,
      worldId,
      afterId,
      limit,
    ) as EndpointRow[];
  }

  /** A deleted world's endpoints stop: nothing of it is delivered again. */
  disableWorld(worldId: string, nowIso: string): number {
    return this.s.disableWorld.run(nowIso, worldId).changes;
  }

  liveEndpoints(): EndpointRow[] {
    return this.s.liveEndpoints.all() as EndpointRow[];
  }

  countCapped(userId: string): number {
    return (this.s.countCapped.get(userId) as { n: number }).n;
  }

  insertEvent(e: EventRow): void {
    this.s.insertEvent.run(e.id, e.environment, e.type, e.payload, e.created_at);
  }

  event(id: string): EventRow | undefined {
    return this.s.event.get(id) as EventRow | undefined;
  }

  insertDelivery(d: {
    id: string;
    endpointId: string;
    eventId: string;
    eventType: string;
    status: 'PENDING' | 'HELD';
    nextAttemptAt: string;
    replayOf: string | null;
    createdAt: string;
  }): void {
    this.s.insertDelivery.run(
      d.id,
      d.endpointId,
      d.eventId,
      d.eventType,
      d.status,
      d.nextAttemptAt,
      d.replayOf === null ? 0 : 1,
      d.replayOf,
      d.createdAt,
    );
  }

  delivery(id: string): DeliveryRow | undefined {
    return this.s.delivery.get(id) as DeliveryRow | undefined;
  }

  /** An event's original delivery to an endpoint (not a replay). */
  deliveryOfEvent(endpointId: string, eventId: string): DeliveryRow | undefined {
    return this.s.deliveryOfEvent.get(endpointId, eventId) as DeliveryRow | undefined;
  }

  /** The endpoint's due deliveries, oldest first (per endpoint, so one backlog never starves others). */
  due(endpointId: string, nowIso: string, limit: number): DeliveryRow[] {
    return this.s.due.all(endpointId, nowIso, limit) as DeliveryRow[];
  }

  /**
   * Marks an attempt as begun (attempt_started_at), so that one a crash or shutdown cuts short is
   * still counted (see countCutShortAttempts). False if the delivery is no longer PENDING.
   */
  startAttempt(id: string, at: string): boolean {
    return this.s.startAttempt.run(at, id).changes > 0;
  }

  /**
   * Dead-letters a PENDING delivery without sending it: its attempts (a cut-short one counted)
   * used up its schedule. False if it is no longer PENDING.
   */
  exhaust(id: string, at: string, error: string): boolean {
    return this.s.exhaust.run(at, error, id).changes > 0;
  }

  /** Counts an attempt that ended after its delivery was held or cancelled meanwhile. */
  countAttempt(id: string, at: string): void {
    this.s.countAttempt.run(at, id);
  }

  /**
   * At boot, before any attempt: counts the attempts a crash or shutdown cut short, and
   * dead-letters the deliveries whose cut-short attempt was the last of `maxAttempts`.
   * Returns how many were counted.
   */
  countCutShortAttempts(maxAttempts: number, nowIso: string): number {
    return this.transaction(() => {
      this.s.exhaustCutShort.run(nowIso, maxAttempts);
      return this.s.countCutShort.run().changes;
    });
  }

  /** Records an attempt's outcome; false if the delivery was no longer PENDING (cancelled, held). */
  attempted(
    id: string,
    r: {
      status: DeliveryStatus;
      attempts: number;
      nextAttemptAt: string | null;
      at: string;
      completedAt: string | null;
      responseStatus: number | null;
      error: string | null;
    },
  ): boolean {
    return (
      this.s.attempted.run(
        r.status,
        r.attempts,
        r.nextAttemptAt,
        r.at,
        r.completedAt,
        r.responseStatus,
        r.error,
        id,
      ).changes === 1
    );
  }

  moveStatus(
    endpointId: string,
    from: DeliveryStatus,
    to: DeliveryStatus,
    nextAttemptAt: string | null = null,
  ): number {
    return this.s.moveStatus.run(to, nextAttemptAt, endpointId, from).changes;
  }

  deliveriesOf(
    endpointId: string,
    status: string | undefined,
    beforeId: string,
    limit: number,
  ): DeliveryRow[] {
    return (
      status === undefined
        ? this.s.deliveriesOf.all(endpointId, beforeId, limit)
        : this.s.deliveriesOfByStatus.all(endpointId, status, beforeId, limit)
    ) as DeliveryRow[];
  }

  /** Original (non-replay) terminal deliveries completed since `sinceIso`. */
  windowCounts(endpointId: string, sinceIso: string): WindowCounts {
    const rows = this.s.windowCounts.all(endpointId, sinceIso) as { status: string; n: number }[];
    return {
      succeeded: rows.find((r) => r.status === 'SUCCEEDED')?.n ?? 0,
      deadLettered: rows.find((r) => r.status === 'DEAD_LETTERED')?.n ?? 0,
    };
  }

  /** Dead-lettered originals completed after `afterIso` (the latest success or the baseline). */
  streak(endpointId: string, afterIso: string): number {
    return (this.s.streak.get(endpointId, afterIso) as { n: number }).n;
  }

  dlqCount(endpointId: string): number {
    return (this.s.dlq.get(endpointId) as { n: number }).n;
  }

  replaysSince(endpointId: string, sinceIso: string): number {
    return (this.s.replays.get(endpointId, sinceIso) as { n: number }).n;
  }

  transaction<T>(fn: () => T): T {
    return this.db.transaction(fn)();
  }
}
