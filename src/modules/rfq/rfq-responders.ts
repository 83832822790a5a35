import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { SqlStatement } from '../../common/sql/sql-connection.js';
import type { DataSource } from 'typeorm';
import { DomainError } from '../../common/errors/domain-error.js';
import { connectionOf, PLATFORM_DB } from '../../database/databases.js';

/**
 * Who may quote: accounts approved as RFQ responders (users.rfq_responder_approved in the
 * platform database). Read on every quote operation, so a revoked approval takes effect at once.
 */
@Injectable()
export class RfqResponders {
  private readonly approvedStmt: SqlStatement;
  private readonly allStmt: SqlStatement;

  constructor(@InjectDataSource(PLATFORM_DB) platform: DataSource) {
    const db = connectionOf(platform);
    this.approvedStmt = db.prepare('SELECT rfq_responder_approved AS a FROM users WHERE id = ?');
    this.allStmt = db.prepare('SELECT id FROM users WHERE rfq_responder_approved = TRUE');
  }

  isApproved(userId: string): boolean {
    const row = this.approvedStmt.get(userId) as { a: number } | undefined;
    return row !== undefined && row.a === 1;
  }

  /** 403 RFQ_RESPONDER_NOT_APPROVED unless the account is an approved responder. */
  requireApproved(userId: string): void {
    if (!this.isApproved(userId)) {
      throw new DomainError(
        'RFQ_RESPONDER_NOT_APPROVED',
        'Quoting needs an account approved as an RFQ responder (the rfq:respond scope alone is not enough)',
      );
    }
  }

  /** Every approved responder (the audience of rfq.created and rfq.closed). */
  approvedIds(): string[] {
    return (this.allStmt.all() as { id: string }[]).map((r) => r.id);
  }
}
