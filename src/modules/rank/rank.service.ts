import { Injectable } from '@nestjs/common';
import type { Credential } from '../../common/http/request-context.js';
import { decodeCursor, encodeCursor, type Page } from '../../common/pagination/cursor.js';
import { instant } from '../../common/validation/instant.js';
import type { RankHistoryQueryDto, RankPointDto } from './dto/rank.dto.js';
import { RankSamplerService } from './rank-sampler.service.js';

/** The caller's rank history in the environment of its credential (test key: paper). */
@Injectable()
export class RankService {
  constructor(private readonly sampler: RankSamplerService) {}

  /** Points oldest first, keyset-paginated on time; the due sample is recorded first. */
  history(c: Credential, q: RankHistoryQueryDto): Page<RankPointDto> {
    const list = `rank-history:${c.environment}`;
    const limit = q.limit ?? 50;
    const from = instant(q.from, 'from');
    const to = instant(q.to, 'to');
    const after = q.cursor === undefined ? undefined : decodeCursor(q.cursor, list, ['time'])[0];
    this.sampler.catchUp(c.environment);
    const rows = this.sampler
      .repo(c.environment)
      .page(c.userId, { after, from, to, limit: limit + 1 });
    const page = rows.slice(0, limit);
    return {
      data: page.map((r) => ({
        time: r.time,
        rank: r.rank,
        participants: r.participants,
        realized_pnl_cents: r.realized_pnl_cents,
      })),
      next_cursor: rows.length > limit ? encodeCursor(list, [page[page.length - 1].time]) : null,
    };
  }
}
