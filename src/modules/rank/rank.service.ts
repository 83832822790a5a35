import { Injectable } from '@nestjs/common';
import type { Credential } from '../../common/http/request-context.js';
import { paginate, type Page } from '../../common/pagination/paginate.js';
import { instant } from '../../common/validation/instant.js';
import type { RankHistoryQueryDto, RankPointDto } from './dto/rank.dto.js';
import { RankSamplerService } from './rank-sampler.service.js';

/** The caller's rank history in the world of its credential (test key: paper; world key: its world). */
@Injectable()
export class RankService {
  constructor(private readonly sampler: RankSamplerService) {}

  /** Points oldest first, keyset-paginated on time; the due sample is recorded first. */
  history(c: Credential, q: RankHistoryQueryDto): Page<RankPointDto> {
    const from = instant(q.from, 'from');
    const to = instant(q.to, 'to');
    return paginate({
      list: `rank-history:${c.world}`,
      keys: ['time'],
      query: q,
      fetch: (after, take) => {
        // Only once the cursor is known good: a refused request records nothing.
        this.sampler.catchUp(c.world);
        return this.sampler
          .repo(c.world)
          .page(c.userId, { after: after?.[0], from, to, limit: take });
      },
      keyOf: (r) => [r.time],
      map: (r) => ({
        time: r.time,
        rank: r.rank,
        participants: r.participants,
        realized_pnl_cents: r.realized_pnl_cents,
      }),
    });
  }
}
