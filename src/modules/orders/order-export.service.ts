import { Readable } from 'node:stream';
import { Injectable } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { DomainError } from '../../common/errors/domain-error.js';
import type { Credential } from '../../common/http/request-context.js';
import { ConfigService } from '../../config/config.service.js';
import { EngineRegistry } from '../trading/engine-registry.js';
import type { OrderRow } from '../trading/trading.repository.js';
import { apiCancelReason } from '../trading/cancel-reason.js';

const CHUNK = 1000;
const COLUMNS = [
  'id',
  'client_order_id',
  'market_id',
  'action',
  'side',
  'type',
  'price',
  'quantity',
  'filled_quantity',
  'filled_cost_cents',
  'status',
  'cancel_reason',
  'time_in_force',
  'post_only',
  'created_at',
  'updated_at',
];

function csvField(v: string | number | null): string {
  if (v === null) return '';
  const s = String(v);
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

function csvRow(r: OrderRow): string {
  return (
    [
      r.id,
      r.client_order_id,
      r.market_id,
      r.action,
      r.side,
      r.type,
      r.price,
      r.quantity,
      r.filled_quantity,
      r.fill_cost,
      r.status,
      apiCancelReason(r.cancel_reason),
      r.time_in_force,
      r.post_only === 1 ? 'true' : 'false',
      r.created_at,
      r.updated_at,
    ]
      .map(csvField)
      .join(',') + '\n'
  );
}

/**
 * Streams a user's orders as CSV in constant memory: keyset chunks of 1,000 rows, each read only
 * when the socket asks for more (backpressure), so no cursor stays open across writes.
 */
@Injectable()
export class OrderExportService {
  constructor(
    private readonly engines: EngineRegistry,
    private readonly config: ConfigService,
  ) {}

  stream(c: Credential, reply: FastifyReply): void {
    const repo = this.engines.get(c.environment).repo;
    const max = this.config.values.exportMaxRows;
    const total = repo.countOrders(c.userId);
    if (total > max) {
      throw new DomainError(
        'EXPORT_TOO_LARGE',
        `The export would hold ${total} orders; the most is ${max}`,
        {
          rows: total,
          max_rows: max,
        },
      );
    }
    let after = '';
    let headerSent = false;
    const body = new Readable({
      read() {
        if (!headerSent) {
          headerSent = true;
          this.push(COLUMNS.join(',') + '\n');
          return;
        }
        const rows = repo.ordersChunk(c.userId, after, CHUNK);
        if (rows.length === 0) {
          this.push(null);
          return;
        }
        after = rows[rows.length - 1].id;
        this.push(rows.map(csvRow).join(''));
      },
    });
    void reply
      .type('text/csv; charset=utf-8')
      .header('Content-Disposition', `attachment; filename="orders-${c.environment}.csv"`)
      .send(body);
  }
}
