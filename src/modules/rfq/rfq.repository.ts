import {
  queryDeferred,
  type SqlConnection,
  type SqlStatement,
} from '../../common/sql/sql-connection.js';

export type RfqStatus = 'OPEN' | 'FILLED' | 'CANCELLED' | 'EXPIRED';
export type QuoteStatus = 'OPEN' | 'ACCEPTED' | 'REPLACED' | 'CANCELLED' | 'EXPIRED';

/** A stored RFQ. */
export interface RfqRow {
  id: string;
  user_id: string;
  market_id: string;
  quantity: number;
  status: RfqStatus;
  expires_at: string;
  accepted_quote_id: string | null;
  trade_id: string | null;
  created_at: string;
  updated_at: string;
}

/** A stored quote; `hold_id` names the engine reservation backing it. */
export interface QuoteRow {
  id: string;
  rfq_id: string;
  responder_id: string;
  bid: number | null;
  ask: number | null;
  quantity: number;
  status: QuoteStatus;
  hold_id: string;
  hold_cents: number;
  expires_at: string;
  created_at: string;
  updated_at: string;
}

const RFQ_COLS =
  'id, user_id, market_id, quantity, status, expires_at, accepted_quote_id, trade_id, created_at, updated_at';
const QUOTE_COLS =
  'id, rfq_id, responder_id, bid, ask, quantity, status, hold_id, hold_cents, expires_at, created_at, updated_at';

/**
 * The RFQs and quotes of one world's database (plain SQL on its connection, the connection the
 * engine commits on, so these statements may run inside an engine commit; the schema is migration
 * Rfq1763769600025's). State changes are conditional on the row still being OPEN and answer
 * whether they changed it, so two racing writers cannot both end one row.
 */
export class RfqRepository {
  private readonly insertRfqStmt: SqlStatement;
  private readonly rfqStmt: SqlStatement;
  private readonly pageStmt: SqlStatement;
  private readonly pageByStatusStmt: SqlStatement;
  private readonly openPageStmt: SqlStatement;
  private readonly openCountStmt: SqlStatement;
  private readonly endRfqStmt: SqlStatement;
  private readonly fillRfqStmt: SqlStatement;
  private readonly acceptQuoteStmt: SqlStatement;
  private readonly dueRfqsStmt: SqlStatement;
  private readonly openRfqsStmt: SqlStatement;
  private readonly userRfqsStmt: SqlStatement;
  private readonly insertQuoteStmt: SqlStatement;
  private readonly quoteStmt: SqlStatement;
  private readonly quotesOfRfqStmt: SqlStatement;
  private readonly openQuotesOfRfqStmt: SqlStatement;
  private readonly responderQuotesStmt: SqlStatement;
  private readonly openQuoteOfStmt: SqlStatement;
  private readonly endQuoteStmt: SqlStatement;
  private readonly dueQuotesStmt: SqlStatement;
  private readonly openQuotesOfResponderStmt: SqlStatement;
  private readonly strandedStmt: SqlStatement;

  constructor(private readonly db: SqlConnection) {
    this.insertRfqStmt = db.prepare(
      `INSERT INTO rfqs (${RFQ_COLS}) VALUES (@id, @user_id, @market_id, @quantity, @status, @expires_at, @accepted_quote_id, @trade_id, @created_at, @updated_at)`,
    );
    this.rfqStmt = db.prepare(`SELECT ${RFQ_COLS} FROM rfqs WHERE id = ?`);
    this.pageStmt = db.prepare(
      `SELECT ${RFQ_COLS} FROM rfqs WHERE user_id = ? AND id < ? ORDER BY id DESC LIMIT ?`,
    );
    this.pageByStatusStmt = db.prepare(
      `SELECT ${RFQ_COLS} FROM rfqs WHERE user_id = ? AND status = ? AND id < ? ORDER BY id DESC LIMIT ?`,
    );
    this.openPageStmt = db.prepare(
      `SELECT ${RFQ_COLS} FROM rfqs WHERE status = 'OPEN' AND id < ? ORDER BY id DESC LIMIT ?`,
    );
    this.openCountStmt = db.prepare(
      `SELECT COUNT(*) AS n FROM rfqs WHERE user_id = ? AND status = 'OPEN'`,
    );
    this.endRfqStmt = db.prepare(
      `UPDATE rfqs SET status = ?, updated_at = ? WHERE id = ? AND status = 'OPEN'`,
    );
    this.fillRfqStmt = db.prepare(
      `UPDATE rfqs SET status = 'FILLED', accepted_quote_id = ?, trade_id = ?, updated_at = ? WHERE id = ? AND status = 'OPEN'`,
    );
    this.acceptQuoteStmt = db.prepare(
      `UPDATE rfq_quotes SET status = 'ACCEPTED', updated_at = ? WHERE id = ? AND status = 'OPEN'`,
    );
    this.dueRfqsStmt = db.prepare(
      `SELECT ${RFQ_COLS} FROM rfqs WHERE status = 'OPEN' AND expires_at <= ? ORDER BY expires_at LIMIT ?`,
    );
    this.openRfqsStmt = db.prepare(`SELECT ${RFQ_COLS} FROM rfqs WHERE status = 'OPEN'`);
    this.userRfqsStmt = db.prepare(
      `SELECT ${RFQ_COLS} FROM rfqs WHERE user_id = ? AND status = 'OPEN'`,
    );
    this.insertQuoteStmt = db.prepare(
      `INSERT INTO rfq_quotes (${QUOTE_COLS}) VALUES (@id, @rfq_id, @responder_id, @bid, @ask, @quantity, @status, @hold_id, @hold_cents, @expires_at, @created_at, @updated_at)`,
    );
    this.quoteStmt = db.prepare(`SELECT ${QUOTE_COLS} FROM rfq_quotes WHERE id = ?`);
    this.quotesOfRfqStmt = db.prepare(
      `SELECT ${QUOTE_COLS} FROM rfq_quotes WHERE rfq_id = ? AND status = 'OPEN' AND id > ? ORDER BY id LIMIT ?`,
    );
    this.openQuotesOfRfqStmt = db.prepare(
      `SELECT ${QUOTE_COLS} FROM rfq_quotes WHERE rfq_id = ? AND status = 'OPEN' ORDER BY id`,
    );
    this.responderQuotesStmt = db.prepare(
      `SELECT ${QUOTE_COLS} FROM rfq_quotes WHERE rfq_id = ? AND responder_id = ? AND id > ? ORDER BY id LIMIT ?`,
    );
    this.openQuoteOfStmt = db.prepare(
      `SELECT ${QUOTE_COLS} FROM rfq_quotes WHERE rfq_id = ? AND responder_id = ? AND status = 'OPEN'`,
    );
    this.endQuoteStmt = db.prepare(
      `UPDATE rfq_quotes SET status = ?, updated_at = ? WHERE id = ? AND status = 'OPEN'`,
    );
    this.dueQuotesStmt = db.prepare(
      `SELECT ${QUOTE_COLS} FROM rfq_quotes WHERE status = 'OPEN' AND expires_at <= ? ORDER BY expires_at LIMIT ?`,
    );
    this.openQuotesOfResponderStmt = db.prepare(
      `SELECT ${QUOTE_COLS} FROM rfq_quotes WHERE responder_id = ? AND status = 'OPEN'`,
    );
    this.strandedStmt = db.prepare(
      `SELECT ${QUOTE_COLS.split(', ')
        .map((c) => `q.${c}`)
        .join(
          ', ',
        )} FROM rfq_quotes q JOIN rfqs r ON r.id = q.rfq_id WHERE q.status = 'OPEN' AND r.status <> 'OPEN'`,
    );
  }

  /** Runs `work` as one transaction (nested in an engine commit, it joins that one). */
  transaction<T>(work: () => T): T {
    return this.db.inTransaction ? work() : this.db.transaction(work)();
  }

  insertRfq(row: RfqRow): void {
    this.insertRfqStmt.run(row);
  }

  rfq(id: string): RfqRow | undefined {
    return this.rfqStmt.get(id) as RfqRow | undefined;
  }

  /** A user's RFQs, newest first, before the id `before` ('' for the first page). */
  page(userId: string, status: RfqStatus | undefined, before: string, take: number): RfqRow[] {
    const b = before === '' ? '\uffff' : before;
    return (
      status === undefined
        ? this.pageStmt.all(userId, b, take)
        : this.pageByStatusStmt.all(userId, status, b, take)
    ) as RfqRow[];
  }

  /** Every OPEN RFQ of the world, newest first (the responders' list). */
  openPage(before: string, take: number): RfqRow[] {
    return this.openPageStmt.all(before === '' ? '\uffff' : before, take) as RfqRow[];
  }

  openCount(userId: string): number {
    return (this.openCountStmt.get(userId) as { n: number }).n;
  }

  /** OPEN -> `status`; false when it was no longer OPEN. */
  endRfq(id: string, status: Exclude<RfqStatus, 'OPEN' | 'FILLED'>, now: string): boolean {
    return this.endRfqStmt.run(status, now, id).changes === 1;
  }

  /** OPEN -> FILLED by this quote; false when it was no longer OPEN. */
  fillRfq(id: string, quoteId: string, tradeId: string | null, now: string): boolean {
    return this.fillRfqStmt.run(quoteId, tradeId, now, id).changes === 1;
  }

  /** OPEN -> ACCEPTED; false when it was no longer OPEN. */
  acceptQuote(id: string, now: string): boolean {
    return this.acceptQuoteStmt.run(now, id).changes === 1;
  }

  dueRfqs(now: string, take: number): RfqRow[] {
    return this.dueRfqsStmt.all(now, take) as RfqRow[];
  }

  openRfqs(): RfqRow[] {
    return this.openRfqsStmt.all() as RfqRow[];
  }

  openRfqsOf(userId: string): RfqRow[] {
    return this.userRfqsStmt.all(userId) as RfqRow[];
  }

  /**
   * {@link openRfqsOf} read inside the caller's transaction, deferred (queryDeferred): on
   * PostgreSQL it goes with the transaction's next round trip (a sandbox reset's COMMIT); the
   * rows can be read once that has answered.
   */
  stageOpenRfqsOf(userId: string): () => RfqRow[] {
    const rfqs = queryDeferred(this.userRfqsStmt, userId);
    return () => rfqs.rows as RfqRow[];
  }

  /** {@link openQuotesOfResponder}, deferred as {@link stageOpenRfqsOf} is. */
  stageOpenQuotesOfResponder(responderId: string): () => QuoteRow[] {
    const quotes = queryDeferred(this.openQuotesOfResponderStmt, responderId);
    return () => quotes.rows as QuoteRow[];
  }

  insertQuote(row: QuoteRow): void {
    this.insertQuoteStmt.run(row);
  }

  quote(id: string): QuoteRow | undefined {
    return this.quoteStmt.get(id) as QuoteRow | undefined;
  }

  /** The OPEN quotes of an RFQ, oldest first, after the id `after`. */
  openQuotesPage(rfqId: string, after: string, take: number): QuoteRow[] {
    return this.quotesOfRfqStmt.all(rfqId, after, take) as QuoteRow[];
  }

  openQuotesOf(rfqId: string): QuoteRow[] {
    return this.openQuotesOfRfqStmt.all(rfqId) as QuoteRow[];
  }

  /** One responder's quotes on an RFQ (any status), oldest first, after the id `after`. */
  responderQuotesPage(rfqId: string, responderId: string, after: string, take: number): QuoteRow[] {
    return this.responderQuotesStmt.all(rfqId, responderId, after, take) as QuoteRow[];
  }

  openQuoteOf(rfqId: string, responderId: string): QuoteRow | undefined {
    return this.openQuoteOfStmt.get(rfqId, responderId) as QuoteRow | undefined;
  }

  /** OPEN -> `status`; false when it was no longer OPEN. */
  endQuote(id: string, status: Exclude<QuoteStatus, 'OPEN'>, now: string): boolean {
    return this.endQuoteStmt.run(status, now, id).changes === 1;
  }

  dueQuotes(now: string, take: number): QuoteRow[] {
    return this.dueQuotesStmt.all(now, take) as QuoteRow[];
  }

  openQuotesOfResponder(responderId: string): QuoteRow[] {
    return this.openQuotesOfResponderStmt.all(responderId) as QuoteRow[];
  }

  /** OPEN quotes of RFQs no longer OPEN (a stop between ending an RFQ and its quotes). */
  strandedQuotes(): QuoteRow[] {
    return this.strandedStmt.all() as QuoteRow[];
  }
}
