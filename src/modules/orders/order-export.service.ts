import { Readable } from 'node:stream';
import { Injectable } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { DomainError, validationFailed } from '../../common/errors/domain-error.js';
import { instant } from '../../common/validation/instant.js';
import type { Credential } from '../../common/http/request-context.js';
import { ConfigService } from '../../config/config.service.js';
import { EngineRegistry } from '../trading/engine-registry.js';
import type { ExportFilter, OrderRow } from '../trading/stores/order.store.js';
import type { ExportOrdersQueryDto } from './dto/order.dto.js';
import { apiCancelReason } from '../trading/cancel-reason.js';
import { csvCell } from '../../common/csv/csv-cell.js';

/** Rows a chunk: about a millisecond of reading and formatting. */
const CHUNK = 250;
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
  'self_trade_prevention',
  'created_at',
  'updated_at',
];

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
      r.self_trade_prevention,
      r.created_at,
      r.updated_at,
    ]
      .map(csvCell)
      .join(',') + '\n'
  );
}

/**
 * Streams a user's orders as CSV in constant memory: keyset chunks, each read only when the
 * socket asks for more (backpressure), so no cursor stays open across writes. Each chunk is read
 * on its own event-loop turn, so a fast reader never holds the service for a whole export (with
 * synchronous reads one after another it did, a second per 200,000 orders), and a chunk is small
 * enough to cost about a millisecond.
 *
 * An export is what the user had when it began: it ends at their newest order of that moment, so
 * orders placed while it streams neither lengthen it past EXPORT_MAX_ROWS nor shift it.
 */
@Injectable()
export class OrderExportService {
  constructor(
    private readonly engines: EngineRegistry,
    private readonly config: ConfigService,
  ) {}

  stream(c: Credential, q: ExportOrdersQueryDto, reply: FastifyReply): void {
    const repo = this.engines.get(c.world).orderExports;
    const max = this.config.values.exportMaxRows;
    const from = instant(q.created_from, 'created_from');
    const to = instant(q.created_to, 'created_to');
    if (from !== undefined && to !== undefined && from >= to) {
      throw validationFailed([
        { field: 'created_to', message: 'created_to must be after created_from' },
      ]);
    }
    const newest = repo.newestOrderId(c.userId);
    const filter: ExportFilter = {
      userId: c.userId,
      throughId: newest ?? '',
      ...(q.status !== undefined ? { status: q.status } : {}),
      ...(q.market_id !== undefined ? { marketId: q.market_id } : {}),
      ...(from !== undefined ? { from } : {}),
      ...(to !== undefined ? { to } : {}),
    };
    const total = newest === null ? 0 : repo.countExport(filter);
    if (total > max) {
      throw new DomainError(
        'EXPORT_TOO_LARGE',
        `The export would hold ${total} orders; the most is ${max}: narrow it with status, market_id, created_from or created_to`,
        {
          rows: total,
          max_rows: max,
        },
      );
    }
    reply
      .type('text/csv; charset=utf-8')
      .header('Content-Disposition', `attachment; filename="orders-${c.environment}.csv"`);
    if (reply.request.method === 'HEAD') {
      // HEAD reads no rows; a finished stream keeps Fastify from claiming Content-Length: 0.
      void reply.send(Readable.from([]));
      return;
    }
    let after = '';
    let headerSent = false;
    let reading = false;
    const body = new Readable({
      read() {
        if (!headerSent) {
          headerSent = true;
          this.push(COLUMNS.join(',') + '\n');
          return;
        }
        if (reading) return;
        reading = true;
        setImmediate(() => {
          reading = false;
          if (this.destroyed) return;
          // Off the stream's own call now: a failing read ends this export, not the process.
          try {
            const rows = repo.exportChunk(filter, after, CHUNK);
            if (rows.length === 0) {
              this.push(null);
              return;
            }
            after = rows[rows.length - 1].id;
            this.push(rows.map(csvRow).join(''));
          } catch (err) {
            this.destroy(err as Error);
          }
        });
      },
    });
    void reply.send(body);
  }
}
