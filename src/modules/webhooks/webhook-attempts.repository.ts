import type { SqlConnection, SqlStatement } from '../../common/sql/sql-connection.js';

/** How a simulated failure looks to the delivery worker (CONTRACT: simulate-failures). */
export const SIMULATED_FAILURE_MODES = ['HTTP_500', 'TIMEOUT', 'CONNECTION_REFUSED'] as const;
export type SimulatedFailureMode = (typeof SIMULATED_FAILURE_MODES)[number];

/** How an attempt ended, as the attempt log names it. */
export const ATTEMPT_OUTCOMES = [
  'SUCCEEDED',
  'HTTP_ERROR',
  'TIMEOUT',
  'CONNECTION_REFUSED',
  'CONNECTION_ERROR',
  'BLOCKED',
] as const;
export type AttemptOutcome = (typeof ATTEMPT_OUTCOMES)[number];

/** The most of a receiver's answer the attempt log keeps. */
export const RESPONSE_EXCERPT_BYTES = 4096;

export interface AttemptRow {
  delivery_id: string;
  number: number;
  started_at: string;
  duration_ms: number;
  outcome: AttemptOutcome;
  simulated: number;
  url: string;
  /** JSON object of the headers sent (or that would have been sent, when simulated). */
  request_headers: string;
  response_status: number | null;
  response_body: string | null;
  response_body_truncated: number;
  error: string | null;
}

export interface SimulatedFailures {
  pending: number;
  mode: SimulatedFailureMode | null;
}

/**
 * The webhook workbench's tables on the platform database: the per-attempt log and an endpoint's
 * pending simulated failures (columns of webhook_endpoints that the endpoint's own save never
 * writes, so a cached endpoint row can never overwrite the counter).
 */
export class WebhookAttemptsRepository {
  private readonly insertStmt: SqlStatement;
  private readonly ofDeliveryStmt: SqlStatement;
  private readonly setSimulatedStmt: SqlStatement;
  private readonly simulatedStmt: SqlStatement;
  private readonly takeSimulatedStmt: SqlStatement;

  constructor(readonly db: SqlConnection) {
    this.insertStmt = db.prepare(
      `INSERT INTO webhook_attempts (delivery_id, number, started_at, duration_ms, outcome, simulated, url,
      request_headers, response_status, response_body, response_body_truncated, error)
      VALUES (@delivery_id, @number, @started_at, @duration_ms, @outcome, @simulated, @url, @request_headers,
      @response_status, @response_body, @response_body_truncated, @error)`,
    );
    this.ofDeliveryStmt = db.prepare(
      `SELECT * FROM webhook_attempts WHERE delivery_id = ? ORDER BY id LIMIT ?`,
    );
    this.setSimulatedStmt = db.prepare(
      `UPDATE webhook_endpoints SET simulated_failures = ?, simulated_failure_mode = ? WHERE id = ?`,
    );
    this.simulatedStmt = db.prepare(
      `SELECT simulated_failures AS pending, simulated_failure_mode AS mode FROM webhook_endpoints WHERE id = ?`,
    );
    // One statement: two attempts in flight at once can never both take the last one.
    this.takeSimulatedStmt = db.prepare(
      `UPDATE webhook_endpoints SET simulated_failures = simulated_failures - 1
      WHERE id = ? AND simulated_failures > 0 RETURNING simulated_failure_mode AS mode`,
    );
  }

  insert(a: AttemptRow): void {
    this.insertStmt.run(a);
  }

  /** A delivery's attempts, oldest first (at most `limit`). */
  ofDelivery(deliveryId: string, limit: number): AttemptRow[] {
    return this.ofDeliveryStmt.all(deliveryId, limit) as AttemptRow[];
  }

  /** Sets (replaces) an endpoint's pending simulated failures; 0 clears them. */
  setSimulated(endpointId: string, pending: number, mode: SimulatedFailureMode | null): void {
    this.setSimulatedStmt.run(pending, pending === 0 ? null : mode, endpointId);
  }

  simulated(endpointId: string): SimulatedFailures {
    const row = this.simulatedStmt.get(endpointId) as SimulatedFailures | undefined;
    return row === undefined || row.pending === 0 ? { pending: 0, mode: null } : row;
  }

  /** Uses up one pending simulated failure: its mode, or null when none is pending. */
  takeSimulated(endpointId: string): SimulatedFailureMode | null {
    const row = this.takeSimulatedStmt.get(endpointId) as
      { mode: SimulatedFailureMode | null } | undefined;
    return row?.mode ?? null;
  }
}
